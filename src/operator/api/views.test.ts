// SPDX-License-Identifier: Apache-2.0
// A rollout's view: what each machine waits on, every reason a person needs before acting.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { WaitReason, type MachineDecision, type Rollout } from '../../core/rollout/types.ts';
import type { MachineRecord } from '../ports/store.ts';
import { decisionKey, rolloutView, type RolloutContext } from './views.ts';

const now = Date.parse('2026-11-30T12:00:00Z');
const paused: Rollout = {
  ...{ id: 'w-1.1.0', pool: 'workers', target: { version: '1.1.0', digest: 'sha256:b' } },
  ...{ state: 'Paused', createdAt: now - 60_000, machines: {} },
};
const record = (id: string): MachineRecord => ({
  ...{ id, endpoint: `https://${id}:7443`, role: 'worker', pool: 'workers', labels: {} },
});
const waiting = (machine: string): MachineDecision => ({
  ...{ rollout: paused.id, machine, action: 'wait', batch: 0 },
  reason: { code: WaitReason.Paused, message: `rollout ${paused.id} is paused` },
});

function context(
  holds: RolloutContext['holds'],
  staged: RolloutContext['staged'] = new Set(),
): RolloutContext {
  const ids = ['w-1', 'w-2'];
  return {
    machines: ids.map(record),
    decisions: new Map(ids.map((id) => [decisionKey(paused.id, id), waiting(id)])),
    observed: () => true,
    holds,
    staged,
    now,
  };
}

describe('a rollout view', () => {
  it('says a machine of a paused rollout is also held, so resuming is not taken to start it', () => {
    const hold = { reason: 'disk swap', until: now + 3_600_000 };
    const view = rolloutView(paused, context(new Map([['w-2', hold]])));
    assert.deepEqual(
      view.machines.map((m) => m.decision?.reason?.message),
      [
        'rollout w-1.1.0 is paused',
        'rollout w-1.1.0 is paused; also held until 2026-11-30T13:00:00Z: disk swap',
      ],
    );
    assert.equal(view.machines[1]?.decision?.reason?.code, WaitReason.Paused);
  });

  it('says nothing of a hold that ended', () => {
    const ended = { reason: 'disk swap', until: now };
    const view = rolloutView(paused, context(new Map([['w-2', ended]])));
    assert.equal(view.machines[1]?.decision?.reason?.message, 'rollout w-1.1.0 is paused');
  });

  it('marks the machines that hold the release staged, with the operation to apply, until they start', () => {
    const started: Rollout = {
      ...paused,
      machines: { 'w-1': { phase: 'InFlight', startedAt: now, operationId: 'op-1' } },
      staged: { 'w-1': { operationId: 'op-1', at: now }, 'w-2': { operationId: 'op-2', at: now } },
    };
    const both = new Set([decisionKey(paused.id, 'w-1'), decisionKey(paused.id, 'w-2')]);
    const view = rolloutView(started, context(new Map(), both));
    assert.deepEqual(
      view.machines.map((m) => [m.machine, m.phase, m.staged, m.operationId]),
      [
        ['w-1', 'InFlight', undefined, 'op-1'],
        ['w-2', 'Pending', true, 'op-2'],
      ],
    );
    const none = rolloutView(paused, context(new Map()));
    assert.ok(none.machines.every((m) => m.staged === undefined));
  });
});
