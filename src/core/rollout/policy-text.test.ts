// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { policyText, poolFollows, poolRuleTexts } from './policy-text.ts';
import type { Policy } from './types.ts';

describe('policy sentences', () => {
  it('says each kind of policy in the fleet file’s words', () => {
    const cases: [Policy, string][] = [
      [{ kind: 'concurrency', limit: { count: 1 } }, 'at most 1 machine at a time'],
      [{ kind: 'concurrency', limit: { percent: 25 } }, 'at most 25% at a time'],
      [{ kind: 'rate', count: 3, periodMs: 3_600_000 }, 'at most 3 starts per 1h'],
      [
        {
          kind: 'window',
          windows: [{ cron: '0 2 * * *', durationMs: 7_200_000, timeZone: 'Europe/Paris' }],
          exclusions: [{ cron: '0 0 24 12 *', durationMs: 86_400_000 }],
        },
        'windows: 0 2 * * * for 2h (Europe/Paris); not 0 0 24 12 * for 1d',
      ],
      [{ kind: 'canary', count: 2, soakMs: 600_000 }, 'canary: 2 machines, then 10m'],
      [{ kind: 'batches', soakMs: 300_000 }, 'batches, 5m apart'],
      [{ kind: 'machine-soak', soakMs: 60_000 }, 'each machine soaks 1m'],
      [{ kind: 'zones', label: 'zone', order: ['a', 'b'] }, 'one zone at a time by zone (a, b)'],
      [{ kind: 'control-plane-first' }, 'control planes first'],
      [{ kind: 'failure-budget', maxFailed: 1 }, 'halt after 1 failed'],
      [{ kind: 'gate', name: 'alerts', url: 'http://u:p@gate/x' }, 'gate alerts'],
    ];
    for (const [p, text] of cases) assert.equal(policyText(p), text);
  });

  it('names a gate, never its URL (which may carry credentials)', () => {
    assert.doesNotMatch(policyText({ kind: 'gate', name: 'g', url: 'http://u:p@h/' }), /http/);
  });

  it('says the pool’s other rules only when they differ from the defaults', () => {
    assert.deepEqual(poolRuleTexts({ name: 'p', policies: [] }), []);
    assert.deepEqual(
      poolRuleTexts({
        name: 'p',
        policies: [],
        requireApproval: true,
        minReleaseAgeMs: 86_400_000,
        phased: { startFraction: 0.1, durationMs: 172_800_000 },
        strategy: 'replace',
        onHalt: 'rollback',
        onHold: 'skip',
        stage: { ahead: true, concurrency: 3 },
      }),
      [
        'a person approves each rollout',
        'releases at least 1d old',
        'phased: 10% at once, all within 2d',
        'machines are replaced, not upgraded in place',
        'on halt: roll back by itself',
        'held machines: finish without them, catch them up later',
        'stages the release ahead of each start, 3 machines at a time',
      ],
    );
  });

  it('says what the pool follows: a channel, or another pool it promotes from', () => {
    assert.equal(poolFollows({ name: 'p', policies: [], channel: 'stable' }), 'channel stable');
    assert.equal(
      poolFollows({ name: 'p', policies: [], channel: 'x', promoteFrom: 'staging' }),
      'what pool staging finished',
    );
    assert.equal(poolFollows({ name: 'p', policies: [] }), undefined);
  });
});
