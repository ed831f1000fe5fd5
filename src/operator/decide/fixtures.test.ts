// SPDX-License-Identifier: Apache-2.0
// Shared fixtures of the decisions' and the loop's component tests (no tests here): two release
// digests, a release of the `stable` channel, and an idle agent's status booted on a digest.
import type { Release } from '../../core/releases/release.ts';
import type { Pool } from '../../core/rollout/types.ts';
import type { MachineRecord } from '../ports/store.ts';
import type { OperatorSettings } from './settings.ts';
import type { AgentStatus } from '../../protocol/agent.ts';

export const d10 = `sha256:${'a'.repeat(64)}`;
export const d11 = `sha256:${'b'.repeat(64)}`;

export const release = (version: string, digest: string): Release => ({
  digest,
  tag: version,
  tags: [version],
  version,
  channels: ['stable'],
  official: true,
  created: undefined,
  kubernetes: undefined,
  upgradeFrom: undefined,
  signature: { status: 'unchecked' },
});

/** An idle agent booted from slot A on `digest`, with `last` as its latest result. */
export function idle(digest: string, last: AgentStatus['last'] = null, node = 'w-1'): AgentStatus {
  return {
    node,
    role: 'worker',
    bootId: 'b',
    bootedSlot: 'A',
    version: digest === d11 ? '1.1.0' : '1.0.0',
    slots: [{ slot: 'A', status: 'ready', version: null, digest, generation: 1 }],
    boot: { bootloader: 'grub', committed: 'A', oneShot: null, entries: [] },
    phase: 'Idle',
    operation: null,
    last,
  };
}

/** Operator settings for component tests: images at `reg/molt@<digest>`, no fleet policies. */
export const testSettings = (pools: readonly Pool[], discoverEveryMs = 0): OperatorSettings => ({
  pools,
  fleetPolicies: [],
  imageFor: (digest) => `reg/molt@${digest}`,
  unreachableFailMs: 60_000,
  discoverEveryMs,
});

/** A worker of pool `workers` whose agent nobody listens for (the gateway is scripted). */
export const w1: MachineRecord = {
  id: 'w-1',
  endpoint: 'https://127.0.0.1:1',
  role: 'worker',
  pool: 'workers',
  labels: {},
};

/** A worker record of `pool` whose agent is at `https://<id>:7443`. */
export const worker = (id: string, pool: string): MachineRecord => ({
  id,
  pool,
  endpoint: `https://${id}:7443`,
  role: 'worker',
  labels: {},
});
