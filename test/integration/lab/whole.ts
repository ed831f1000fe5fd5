// SPDX-License-Identifier: Apache-2.0
// What "the machine is whole" means after any crash (DESIGN invariant 5): the operation ended,
// the machine runs its committed slot, nothing is left armed, and the booted slot is ready.
import assert from 'node:assert/strict';
import type { AgentStatus } from '../../../src/protocol/agent.ts';

/** The machine is whole: Idle, booted = committed, nothing armed, the booted slot ready. */
export function assertWhole(status: AgentStatus, operationId: string): void {
  assert.equal(status.phase, 'Idle', 'the operation ended');
  assert.equal(status.last?.operationId, operationId);
  assert.equal(status.boot.committed, status.bootedSlot, 'the machine runs its committed slot');
  assert.equal(status.boot.oneShot, null, 'no boot-once is left armed');
  const booted = status.slots.find((s) => s.slot === status.bootedSlot);
  assert.equal(booted?.status, 'ready');
  assert.equal(booted.version, status.version);
}
