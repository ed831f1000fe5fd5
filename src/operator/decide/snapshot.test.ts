// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { plan } from '../../core/rollout/plan.ts';
import type { Rollout } from '../../core/rollout/types.ts';
import type { StoredState } from '../ports/store.ts';
import type { Observation } from './observation.ts';
import { fleetSnapshot } from './snapshot.ts';
import { d10, d11, idle, worker as machine } from './fixtures.test.ts';

const active: Rollout = {
  id: 'r1',
  pool: 'gone',
  target: { version: '1.1.0', digest: d11 },
  state: 'Active',
  createdAt: 0,
  machines: {},
};
const seen = (): Observation => ({ at: 0, status: idle(d10) });

describe('the planner’s input from the store', () => {
  it('freezes a pool that machines and a running rollout name but no setting defines', () => {
    const stored: StoredState = {
      machines: [machine('w-1', 'gone')],
      rollouts: [active],
      starts: [],
      holds: {},
      blocks: [],
    };
    const snapshot = fleetSnapshot(
      stored,
      { agent: seen, gates: {} },
      { pools: [], fleetPolicies: [] },
    );
    assert.deepEqual(snapshot.pools, [
      { name: 'gone', policies: [{ kind: 'concurrency', limit: { count: 0 } }] },
    ]);
    const decided = plan(snapshot, 1_000);
    assert.deepEqual(
      decided.decisions.map((d) => [d.machine, d.action]),
      [['w-1', 'wait']],
      'nothing of an unknown pool starts',
    );
  });

  it('turns a pin in the store into the planner’s pin, not a hold', () => {
    const stored: StoredState = {
      machines: [machine('w-1', 'workers')],
      rollouts: [],
      starts: [],
      holds: { 'w-1': { reason: 'vendor kernel', until: 9e15, by: 'k', version: '1.0.0' } },
      blocks: [],
    };
    const [m] = fleetSnapshot(
      stored,
      { agent: () => undefined, gates: {} },
      {
        pools: [{ name: 'workers', policies: [] }],
        fleetPolicies: [],
      },
    ).machines;
    assert.ok(m !== undefined);
    assert.deepEqual(m.pin, { version: '1.0.0', reason: 'vendor kernel' });
    assert.equal(m.hold, undefined);
  });
});
