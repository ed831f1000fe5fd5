// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { PlanView, RolloutSummaryView } from '../../../protocol/index.ts';
import { describeLivePlan } from './live-view.ts';

const summary = (id: string, state: RolloutSummaryView['state']): RolloutSummaryView =>
  ({ id, pool: 'workers', state, target: { version: '1.1.0' } }) as RolloutSummaryView;

const plan = (ids: readonly string[]): PlanView => ({
  at: '2026-11-30T12:00:00Z',
  leader: true,
  observed: { machines: 3, of: 3 },
  decisions: [],
  windows: [],
  rollouts: ids.map((rollout) => ({ rollout, verdict: 'continue' as const })),
});

describe('the live plan', () => {
  it('says a rollout that awaits approval or is paused waits, not "continue"', () => {
    const text = describeLivePlan({
      operator: 'https://op:7443',
      plan: plan(['a', 'p', 'r']),
      rollouts: [summary('a', 'AwaitingApproval'), summary('p', 'Paused'), summary('r', 'Active')],
    });
    assert.match(text, /^a +workers +1\.1\.0 +AwaitingApproval +wait for approval/m);
    assert.match(text, /^p +workers +1\.1\.0 +Paused +wait \(paused\)/m);
    assert.match(text, /^r +workers +1\.1\.0 +Active +continue/m);
  });

  it('says a pool passes over a rolled-back release, why, and how to offer it again', () => {
    const reason = 'blocked by alice: rolled back by w-1.3.0-rollback (to 1.2.0): bad disk driver';
    const text = describeLivePlan({
      operator: 'https://op:7443',
      plan: {
        ...plan([]),
        releases: [
          {
            pool: 'workers',
            current: '1.2.0',
            notTaken: [{ version: '1.3.0', digest: 'sha256:3', code: 'Blocked', reason }],
            none: 'no newer release is eligible',
          },
        ],
      },
      rollouts: [],
    });
    assert.match(
      text,
      /^workers +1\.2\.0 +no newer release is eligible +1\.3\.0 \(Blocked: blocked by alice: rolled back by w-1\.3\.0-rollback \(to 1\.2\.0\): bad disk driver; offer it again: molt releases unblock 1\.3\.0 --pool workers\)$/m,
    );
  });

  it('marks a waiting machine its rollout staged ahead, and only that one', () => {
    const wait = {
      rollout: 'r',
      action: 'wait' as const,
      batch: 1,
      reason: { code: 'WindowClosed', message: 'outside the window' },
    };
    const text = describeLivePlan({
      operator: 'https://op:7443',
      plan: {
        ...plan(['r']),
        decisions: [
          { ...wait, machine: 'w-1', staged: true },
          { ...wait, machine: 'w-2' },
        ],
      },
      rollouts: [summary('r', 'Active')],
    });
    assert.match(text, /^r +w-1 +wait \(staged\) +1 /m);
    assert.match(text, /^r +w-2 +wait +1 /m);
  });
});
