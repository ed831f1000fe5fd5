// SPDX-License-Identifier: Apache-2.0
// Every refusal of validatePolicies: the code is MOLT_POLICY_INVALID and the message names the path.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ErrorCode, isMoltError } from '../errors.ts';
import { machine, workers } from './fixtures.test.ts';
import type { Machine, Policy, Pool } from './types.ts';
import { validatePolicies } from './validate.ts';

const day: Policy = { kind: 'window', windows: [{ cron: '0 2 * * *', durationMs: 3_600_000 }] };

function refuses(policy: Policy, path: string, machines: Machine[] = workers(4)): void {
  const pools: Pool[] = [
    { name: 'empty', policies: [] },
    { name: 'workers', policies: [day, policy] },
  ];
  assert.throws(
    () => {
      validatePolicies(pools, [], machines);
    },
    (e: unknown) => {
      assert.ok(isMoltError(e, ErrorCode.PolicyInvalid), String(e));
      assert.ok(e.message.startsWith(`${path}:`), `${e.message} does not start with ${path}`);
      assert.equal(e.details?.['path'], path);
      return true;
    },
  );
}

const P = 'pools[1].policies[1]';

describe('validatePolicies', () => {
  it('refuses durations whose ends are not dates (a window, a soak of 800000000 days)', () => {
    // Found by time.fuzz.test.ts and fleet.fuzz.test.ts: croner threw a TypeError and the
    // planner a RangeError (toISOString) for such policies once they were accepted.
    const huge = 800_000_000 * 86_400_000;
    refuses(
      { kind: 'window', windows: [{ cron: '0 2 * * *', durationMs: huge }] },
      `${P}.window.windows[0].duration`,
    );
    refuses({ kind: 'canary', count: 1, soakMs: huge }, `${P}.canary.soak`);
    refuses({ kind: 'rate', count: 1, periodMs: huge }, `${P}.rate.per`);
  });

  it('accepts sensible policies', () => {
    const machines = workers(4).map((m) => ({ ...m, labels: { zone: 'a' } }));
    const policies: Policy[] = [
      { kind: 'concurrency', limit: { percent: 100 } },
      { kind: 'concurrency', limit: { count: 2 } },
      { kind: 'rate', count: 1, periodMs: 1 },
      {
        kind: 'window',
        windows: [{ cron: '0 2 * * 1-5', durationMs: 1, timeZone: 'Europe/Berlin' }],
      },
      { kind: 'canary', count: 4, soakMs: 0 },
      { kind: 'batches', soakMs: 0 },
      { kind: 'machine-soak', soakMs: 60_000 },
      { kind: 'zones', label: 'zone', order: ['a'] },
      { kind: 'control-plane-first' },
      { kind: 'failure-budget', maxFailed: 3 },
    ];
    validatePolicies(
      [{ name: 'workers', policies }],
      [{ kind: 'canary', count: 1, soakMs: 0 }],
      machines,
    );
  });

  it('refuses percentages of 0, below 0 and above 100', () => {
    for (const percent of [0, -5, 100.5, Number.NaN]) {
      refuses({ kind: 'concurrency', limit: { percent } }, `${P}.concurrency`);
    }
  });

  it('refuses counts below 1 and fractional counts', () => {
    refuses({ kind: 'concurrency', limit: { count: 0 } }, `${P}.concurrency`);
    refuses({ kind: 'concurrency', limit: { count: 1.5 } }, `${P}.concurrency`);
    refuses({ kind: 'canary', count: 0, soakMs: 0 }, `${P}.canary.count`);
  });

  it('refuses rates of 0 and empty periods', () => {
    refuses({ kind: 'rate', count: 0, periodMs: 60_000 }, `${P}.rate.count`);
    refuses({ kind: 'rate', count: 2, periodMs: 0 }, `${P}.rate.per`);
  });

  it('refuses empty window lists and windows of no duration', () => {
    refuses({ kind: 'window', windows: [] }, `${P}.window.windows`);
    refuses(
      { kind: 'window', windows: [{ cron: '0 2 * * *', durationMs: 0 }] },
      `${P}.window.windows[0].duration`,
    );
    refuses(
      {
        kind: 'window',
        windows: [{ cron: '0 2 * * *', durationMs: 1 }],
        exclusions: [{ cron: '0 3 * * *', durationMs: -1 }],
      },
      `${P}.window.exclusions[0].duration`,
    );
  });

  it('refuses an exclusion that never closes', () => {
    const always = { cron: '*/15 * * * *', durationMs: 20 * 60_000 };
    refuses(
      { kind: 'window', windows: [{ cron: '0 2 * * *', durationMs: 1 }], exclusions: [always] },
      `${P}.window.exclusions[0].duration`,
    );
    const weekdays = { cron: '0 * * * 1-5', durationMs: 3_600_000 };
    validatePolicies(
      [
        {
          name: 'w',
          policies: [
            {
              kind: 'window',
              windows: [{ cron: '0 2 * * *', durationMs: 1 }],
              exclusions: [weekdays],
            },
          ],
        },
      ],
      [],
      [],
    );
  });

  it('refuses invalid cron expressions and crons that never fire', () => {
    refuses(
      { kind: 'window', windows: [{ cron: '0 2 * *', durationMs: 1 }] },
      `${P}.window.windows[0].cron`,
    );
    refuses(
      { kind: 'window', windows: [{ cron: '0 99 * * *', durationMs: 1 }] },
      `${P}.window.windows[0].cron`,
    );
    refuses(
      { kind: 'window', windows: [{ cron: '0 2 30 2 *', durationMs: 1 }] },
      `${P}.window.windows[0].cron`,
    );
  });

  it('refuses unknown time zones', () => {
    refuses(
      { kind: 'window', windows: [{ cron: '0 2 * * *', durationMs: 1, timeZone: 'Mars/Olympus' }] },
      `${P}.window.windows[0].timeZone`,
    );
  });

  it('refuses a canary larger than its pool', () => {
    refuses({ kind: 'canary', count: 5, soakMs: 0 }, `${P}.canary.count`);
  });

  it('refuses one-zone-at-a-time when no machine has the zone label', () => {
    refuses({ kind: 'zones', label: 'zone' }, `${P}.zones.label`, [
      ...workers(2),
      machine('z', { pool: 'empty', labels: { zone: 'a' } }),
    ]);
  });

  it('refuses a failure budget below 1 and negative soaks', () => {
    refuses({ kind: 'failure-budget', maxFailed: 0 }, `${P}.failureBudget`);
    refuses({ kind: 'batches', soakMs: -1 }, `${P}.batches.soak`);
    refuses({ kind: 'machine-soak', soakMs: Number.POSITIVE_INFINITY }, `${P}.machineSoak`);
  });

  it('refuses two policies of a kind that must be unique', () => {
    const twice = (p: Policy): Pool[] => [{ name: 'workers', policies: [p, day, p] }];
    assert.throws(() => {
      validatePolicies(twice({ kind: 'canary', count: 1, soakMs: 0 }), [], workers(3));
    }, /pools\[0\]\.policies\[2\]: a second canary policy/);
    assert.throws(() => {
      validatePolicies([], [{ kind: 'zones', label: 'zone' }], workers(3));
    }, /fleetPolicies\[0\]\.zones\.label/);
    validatePolicies(twice({ kind: 'concurrency', limit: { count: 1 } }), [], workers(3));
  });

  it('refuses promotion from a pool that does not exist, and promotion cycles', () => {
    const pool = (name: string, promoteFrom?: string) => ({
      name,
      policies: [],
      ...(promoteFrom !== undefined && { promoteFrom }),
    });
    assert.throws(
      () => {
        validatePolicies([pool('prod', 'staging')], [], []);
      },
      (e: unknown) =>
        isMoltError(e, ErrorCode.PolicyInvalid) &&
        /pools\[0\]\.promoteFrom.*not a pool/.test(e.message),
    );
    assert.throws(
      () => {
        validatePolicies([pool('a', 'b'), pool('b', 'c'), pool('c', 'a')], [], []);
      },
      (e: unknown) => isMoltError(e, ErrorCode.PolicyInvalid) && /cycle/.test(e.message),
    );
    assert.doesNotThrow(() => {
      validatePolicies([pool('dev'), pool('staging', 'dev'), pool('prod', 'staging')], [], []);
    });
  });

  it('refuses gates without a URL, with a status that is not HTTP, or twice the same name', () => {
    const pool = (policies: Policy[]): Pool[] => [{ name: 'workers', policies }];
    const gate = (over: Partial<Extract<Policy, { kind: 'gate' }>> = {}): Policy => ({
      kind: 'gate',
      name: 'api',
      url: 'https://status.example/healthz',
      ...over,
    });
    const refuses = (policies: Policy[], pattern: RegExp): void => {
      assert.throws(
        () => {
          validatePolicies(pool(policies), [], []);
        },
        (e: unknown) => isMoltError(e, ErrorCode.PolicyInvalid) && pattern.test(e.message),
      );
    };
    refuses(
      [gate({ url: 'status.example' })],
      /policies\[0\]\.gate\.url: 'status\.example' is not an http/,
    );
    refuses([gate({ expectStatus: 42 })], /expectStatus: 42 is not an HTTP status/);
    refuses(
      [gate(), gate({ url: 'http://other' })],
      /policies\[1\]\.gate\.name: a second gate named api/,
    );
    assert.doesNotThrow(() => {
      validatePolicies(
        pool([gate(), gate({ name: 'etcd', url: 'http://127.0.0.1:2379/health' })]),
        [],
        [],
      );
    });
  });
  it('refuses a replace pool without a provider, and a provider that is not http(s) or has no time', () => {
    const refuses = (pool: Pool, pattern: RegExp): void => {
      assert.throws(
        () => {
          validatePolicies([{ name: 'other', policies: [] }, pool], [], []);
        },
        (e: unknown) => isMoltError(e, ErrorCode.PolicyInvalid) && pattern.test(e.message),
      );
    };
    const base: Pool = { name: 'workers', policies: [] };
    refuses(
      { ...base, strategy: 'replace' },
      /^pools\[1\]\.provider: pool workers replaces machines but has no provider/,
    );
    refuses(
      { ...base, strategy: 'replace', provider: { url: 'ftp://lab:9' } },
      /^pools\[1\]\.provider\.url: 'ftp:\/\/lab:9' is not an http/,
    );
    refuses(
      { ...base, provider: { url: 'https://molt:s3cret@provider.lab' } },
      /^pools\[1\]\.provider\.url: must not carry a user or password \(user:password@\)$/,
    );
    refuses(
      { ...base, provider: { url: 'http://127.0.0.1:9', timeoutMs: 0 } },
      /^pools\[1\]\.provider\.timeoutMs: must be a duration above 0 ms/,
    );
    assert.doesNotThrow(() => {
      validatePolicies(
        [
          {
            ...base,
            strategy: 'replace',
            provider: { url: 'https://provider.lab/x', timeoutMs: 1 },
          },
          { name: 'in-place', strategy: 'in-place', policies: [] },
          { name: 'fallback', provider: { url: 'http://127.0.0.1:9' }, policies: [] },
        ],
        [],
        [],
      );
    });
  });
});
