// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { DashboardStateView } from '../protocol/dashboard.ts';
import type { BlockView } from '../protocol/operator-blocks.ts';
import { blockRequest, poolRows, releaseName, unblockRequest } from './pools-model.ts';

const digest = (n: string): string => `sha256:${n.repeat(64)}`;
const rolledBack: BlockView = {
  digest: digest('3'),
  version: '1.3.0',
  pool: 'workers',
  reason: 'rolled back by workers-1.3.0-rollback (to 1.2.0): w-2 failed its health check',
  by: 'operator',
  at: '2026-11-30T10:00:00Z',
  rollout: 'workers-1.3.0',
};
const everyPool: BlockView = {
  digest: digest('4'),
  version: '1.4.0',
  reason: 'vendor advisory',
  by: 'alice',
  at: '2026-11-30T11:00:00Z',
};

function state(): DashboardStateView {
  return {
    session: { anonymousRead: false },
    machines: [
      { id: 'w-1', pool: 'workers', observed: { version: '1.2.0' } },
      { id: 'w-2', pool: 'workers', observed: { version: '1.10.0' } },
      { id: 'w-3', pool: 'workers', observed: { version: '1.2.0' } },
      { id: 'w-4', pool: 'workers' },
      { id: 'e-1', pool: 'edge', observed: {} },
    ],
    rollouts: [{ id: 'workers-1.3.0', state: 'RolledBack' }],
    plan: {
      releases: [
        {
          pool: 'workers',
          current: '1.2.0',
          next: { version: '1.2.1', digest: digest('5') },
          notTaken: [
            { version: '1.3.0', digest: digest('3'), code: 'Blocked', reason: 'rolled back …' },
            { version: '1.4.0', digest: digest('4'), code: 'Blocked', reason: 'blocked by alice' },
            { version: '2.0.0', digest: digest('6'), code: 'NotReachable', reason: 'no path' },
          ],
        },
      ],
    },
    pools: [
      {
        name: 'workers',
        follows: 'channel stable',
        rules: ['at most 1 machine at a time'],
        machines: 3,
      },
      { name: 'edge', rules: [], machines: 0 },
    ],
    blocks: [rolledBack, everyPool],
  } as unknown as DashboardStateView;
}

describe('the releases and pools page', () => {
  it('shows each pool with what it runs and takes next, in the fleet’s order', () => {
    const [workers, edge] = poolRows(state());
    assert.ok(workers !== undefined && edge !== undefined);
    assert.equal(workers.runs, '1.10.0 ×1, 1.2.0 ×2', 'newest first, by version');
    assert.equal(workers.next?.version, '1.2.1');
    assert.equal(workers.follows, 'channel stable');
    assert.deepEqual(edge.passedOver, [], 'a pool the plan does not cover has nothing passed over');
    assert.equal(edge.runs, '–', 'no machine answered with a release');
  });

  it('says the next release is not known when the registry did not answer, not “nothing newer”', () => {
    const s = state();
    const blind = { ...s, plan: { ...s.plan, releases: undefined } } as DashboardStateView;
    assert.equal(poolRows(blind)[0]?.none, 'not known now: the registry did not answer');
    assert.equal(poolRows(s)[0]?.none, undefined);
  });

  it('marks a release rolled back for the pool apart from one a person blocked, each with its block', () => {
    const passed = poolRows(state())[0]?.passedOver ?? [];
    assert.deepEqual(
      passed.map((p) => [p.version, p.mark, p.block?.digest]),
      [
        ['1.3.0', 'rolled back', digest('3')],
        ['1.4.0', 'blocked', digest('4')],
        ['2.0.0', 'passed over', undefined],
      ],
    );
    assert.equal(passed[2]?.reason, 'NotReachable: no path');
  });

  it('lifts a block by digest, for its pool or for every pool', () => {
    assert.deepEqual(unblockRequest(rolledBack), {
      path: '/v1/releases/unblock',
      body: { release: digest('3'), pool: 'workers' },
    });
    assert.deepEqual(unblockRequest(everyPool).body, { release: digest('4') });
    assert.deepEqual(blockRequest(digest('5'), 'workers', 'soak it'), {
      path: '/v1/releases/block',
      body: { release: digest('5'), pool: 'workers', reason: 'soak it' },
    });
  });

  it('names a block’s release by version, or by its digest shortened', () => {
    assert.equal(releaseName(rolledBack), '1.3.0');
    assert.equal(releaseName({ digest: digest('a') }), `sha256:${'a'.repeat(12)}…`);
  });
});
