// SPDX-License-Identifier: Apache-2.0
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ErrorCode, isMoltError, type MoltError } from '../core/errors.ts';
import type { FleetSnapshot } from '../core/rollout/types.ts';
import { formatDuration, parseDuration } from '../core/time.ts';
import { parseFleet } from './fleet.ts';

const good = `
fleet:
  policies: [{concurrency: "10%"}]
pools:
  - name: control-plane
    channel: stable
    policies: [{controlPlaneFirst: true}, {concurrency: 1}]
  - name: workers
    channel: stable
    requireApproval: false
    policies:
      - concurrency: "33%"
      - rate: {count: 2, per: 1h}
      - window:
          windows: [{cron: "0 2 * * *", duration: 4h, timeZone: Europe/Berlin}]
          exclusions: [{cron: "0 0 24 12 *", duration: 1d}]
      - canary: {count: 1, soak: 10m}
      - batches: {soak: 15m}
      - machineSoak: 2m
      - zones: {label: zone, order: [a, b]}
      - failureBudget: 1
machines:
  - {id: cp-1, role: control-plane, pool: control-plane, cluster: lab, labels: {zone: a}, version: 1.0.0, digest: "sha256:aa", available: true}
  - id: w-1
    pool: workers
    labels: {zone: b}
    hold: {reason: disk swap, until: "2026-11-24T00:00:00Z"}
    pin: {version: 1.0.0, reason: vendor driver}
    wariness: 0.5
rollouts:
  - id: r1
    pool: workers
    target: {version: 1.1.0, digest: "sha256:bb"}
    state: Active
    createdAt: "2026-11-23T10:00:00Z"
    phased: {startFraction: 0.1, duration: 1d}
    machines:
      w-1: {phase: Succeeded, startedAt: "2026-11-23T10:05:00Z", finishedAt: "2026-11-23T10:15:30+01:00"}
starts: [{machine: w-1, pool: workers, rollout: r1, at: "2026-11-23T10:05:00Z"}]
leases: {lab: cp-1}
`;

const t = (iso: string): number => Date.parse(iso);
const H = 3_600_000;

const expected: FleetSnapshot = {
  machines: [
    {
      id: 'cp-1',
      role: 'control-plane',
      pool: 'control-plane',
      cluster: 'lab',
      labels: { zone: 'a' },
      version: '1.0.0',
      digest: 'sha256:aa',
      available: true,
    },
    {
      id: 'w-1',
      role: 'worker',
      pool: 'workers',
      labels: { zone: 'b' },
      version: undefined,
      digest: undefined,
      available: true,
      hold: { reason: 'disk swap', until: t('2026-11-24T00:00:00Z') },
      pin: { version: '1.0.0', reason: 'vendor driver' },
      wariness: 0.5,
    },
  ],
  pools: [
    {
      name: 'control-plane',
      channel: 'stable',
      policies: [{ kind: 'control-plane-first' }, { kind: 'concurrency', limit: { count: 1 } }],
    },
    {
      name: 'workers',
      channel: 'stable',
      requireApproval: false,
      policies: [
        { kind: 'concurrency', limit: { percent: 33 } },
        { kind: 'rate', count: 2, periodMs: H },
        {
          kind: 'window',
          windows: [{ cron: '0 2 * * *', durationMs: 4 * H, timeZone: 'Europe/Berlin' }],
          exclusions: [{ cron: '0 0 24 12 *', durationMs: 24 * H }],
        },
        { kind: 'canary', count: 1, soakMs: 600_000 },
        { kind: 'batches', soakMs: 900_000 },
        { kind: 'machine-soak', soakMs: 120_000 },
        { kind: 'zones', label: 'zone', order: ['a', 'b'] },
        { kind: 'failure-budget', maxFailed: 1 },
      ],
    },
  ],
  fleetPolicies: [{ kind: 'concurrency', limit: { percent: 10 } }],
  rollouts: [
    {
      id: 'r1',
      pool: 'workers',
      target: { version: '1.1.0', digest: 'sha256:bb' },
      state: 'Active',
      createdAt: t('2026-11-23T10:00:00Z'),
      phased: { startFraction: 0.1, durationMs: 24 * H },
      machines: {
        'w-1': {
          phase: 'Succeeded',
          startedAt: t('2026-11-23T10:05:00Z'),
          finishedAt: t('2026-11-23T09:15:30Z'),
        },
      },
    },
  ],
  starts: [{ machine: 'w-1', pool: 'workers', rollout: 'r1', at: t('2026-11-23T10:05:00Z') }],
  leases: { lab: 'cp-1' },
};

/** The MoltError `parseFleet` throws for `text`. */
function failure(text: string): MoltError {
  try {
    parseFleet(text, { source: 'f.yaml' });
  } catch (e) {
    if (isMoltError(e)) return e;
    throw e;
  }
  assert.fail('expected a MoltError');
}

const minimal = (extra: string): string =>
  `pools: [{name: p}]\nmachines:\n  - {id: m1, pool: p}\n${extra}`;

describe('parseFleet: a fleet file becomes core’s snapshot', () => {
  it('reads every field of a good file into the exact snapshot', () => {
    assert.deepEqual(parseFleet(good), expected);
  });

  it('reads the same fleet written as JSON', () => {
    const json = JSON.stringify({
      pools: [{ name: 'p', policies: [{ concurrency: 2 }] }],
      machines: [{ id: 'm1', pool: 'p' }],
    });
    const s = parseFleet(json);
    assert.deepEqual(s.pools[0]?.policies, [{ kind: 'concurrency', limit: { count: 2 } }]);
    assert.deepEqual(s.rollouts, []);
    assert.deepEqual(s.starts, []);
    assert.deepEqual(s.fleetPolicies, []);
  });
});

describe('parseFleet: every bad input names file:line:col and the field', () => {
  const cases: { name: string; text: string; code: ErrorCode; message: RegExp }[] = [
    {
      name: 'an unknown field (a typo must not drop a limit)',
      text: 'pools: [{name: p}]\nmachines:\n  - {id: m1, pool: p, avaliable: false}\n',
      code: ErrorCode.FleetInvalid,
      message: /^f\.yaml:3:23: machines\[0\]: unknown field "avaliable"$/,
    },
    {
      name: 'an unknown policy',
      text: 'pools:\n  - name: p\n    policies:\n      - concurrncy: 2\n',
      code: ErrorCode.FleetInvalid,
      message: /^f\.yaml:4:9: pools\[0\]\.policies\[0\]: unknown field "concurrncy"/,
    },
    {
      name: 'two keys in one policy',
      text: 'pools:\n  - name: p\n    policies:\n      - {concurrency: 2, machineSoak: 1m}\n',
      code: ErrorCode.FleetInvalid,
      message:
        /^f\.yaml:4:9: pools\[0\]\.policies\[0\]: a policy has exactly one of .*\(found concurrency, machineSoak\)/,
    },
    {
      name: 'a bad duration',
      text: 'pools:\n  - name: p\n    policies:\n      - machineSoak: 10 minutes\n',
      code: ErrorCode.FleetInvalid,
      message:
        /^f\.yaml:4:22: pools\[0\]\.policies\[0\]\.machineSoak: "10 minutes" is not a duration/,
    },
    {
      name: 'a duration given as a bare number',
      text: 'pools:\n  - name: p\n    policies:\n      - rate: {count: 2, per: 3600}\n',
      code: ErrorCode.FleetInvalid,
      message: /pools\[0\]\.policies\[0\]\.rate\.per: must be a duration like "30m"/,
    },
    {
      name: 'a limit that is neither a count nor a percentage',
      text: 'pools:\n  - name: p\n    policies:\n      - concurrency: half\n',
      code: ErrorCode.FleetInvalid,
      message: /^f\.yaml:4:22: .*concurrency: "half" is not a count \(3\) or a percentage/,
    },
    {
      name: 'a time without a zone',
      text: minimal(
        'rollouts:\n  - {id: r, pool: p, target: {version: "2", digest: d}, state: Active, createdAt: "2026-11-23 10:00"}\n',
      ),
      code: ErrorCode.FleetInvalid,
      message:
        /^f\.yaml:5:83: rollouts\[0\]\.createdAt: "2026-11-23 10:00" is not an ISO 8601 time/,
    },
    {
      name: 'a missing field',
      text: 'pools: [{name: p}]\nmachines:\n  - {id: m1}\n',
      code: ErrorCode.FleetInvalid,
      message: /^f\.yaml:3:5: machines\[0\]\.pool: is required$/,
    },
    {
      name: 'an unknown role',
      text: 'pools: [{name: p}]\nmachines:\n  - {id: m1, pool: p, role: etcd}\n',
      code: ErrorCode.FleetInvalid,
      message: /machines\[0\]\.role: .*"control-plane"\|"worker"/,
    },
    {
      name: 'a duplicate machine id',
      text: 'pools: [{name: p}]\nmachines:\n  - {id: m1, pool: p}\n  - {id: m1, pool: p}\n',
      code: ErrorCode.FleetInvalid,
      message: /^f\.yaml:4:10: machines\[1\]\.id: duplicate id "m1" \(also machines\[0\]\)$/,
    },
    {
      name: 'a duplicate pool name',
      text: 'pools: [{name: p}, {name: p}]\nmachines: []\n',
      code: ErrorCode.FleetInvalid,
      message: /^f\.yaml:1:27: pools\[1\]\.name: duplicate name "p"/,
    },
    {
      name: 'a machine in an unknown pool',
      text: 'pools: [{name: p}]\nmachines:\n  - {id: m1, pool: gpu}\n',
      code: ErrorCode.UnknownPool,
      message: /^f\.yaml:3:20: machines\[0\]\.pool: unknown pool "gpu" \(known pools: p\)$/,
    },
    {
      name: 'a rollout of an unknown pool',
      text: minimal(
        'rollouts:\n  - {id: r, pool: q, target: {version: "2", digest: d}, state: Active, createdAt: "2026-11-23T10:00:00Z"}\n',
      ),
      code: ErrorCode.UnknownPool,
      message: /^f\.yaml:5:19: rollouts\[0\]\.pool: unknown pool "q"/,
    },
    {
      name: 'a rollout naming a machine the fleet does not have',
      text: minimal(
        'rollouts:\n  - id: r\n    pool: p\n    target: {version: "2", digest: d}\n    state: Active\n    createdAt: "2026-11-23T10:00:00Z"\n    machines: {m9: {phase: InFlight}}\n',
      ),
      code: ErrorCode.UnknownMachine,
      message:
        /^f\.yaml:10:16: rollouts\[0\]\.machines: machine "m9" is not a machine of the fleet$/,
    },
    {
      name: 'a YAML syntax error, with its line',
      text: 'pools: [{name: p}]\nmachines:\n  - {id: m1, pool: p\n  - {id: m2, pool: p}\n',
      code: ErrorCode.FleetInvalid,
      message: /^f\.yaml:4:\d+: /,
    },
    {
      name: 'a duplicate key',
      text: 'pools: [{name: p}]\nmachines: []\nmachines: []\n',
      code: ErrorCode.FleetInvalid,
      message: /^f\.yaml:3:1: Map keys must be unique/,
    },
    {
      name: 'a percentage over 100 (core’s rule, placed in the file)',
      text: 'pools:\n  - name: p\n    policies:\n      - concurrency: "150%"\nmachines: []\n',
      code: ErrorCode.PolicyInvalid,
      message:
        /^f\.yaml:4:22: pools\[0\]\.policies\[0\]\.concurrency: must be above 0 and at most 100, got 150$/,
    },
    {
      name: 'an unknown time zone',
      text: minimal(
        'fleet:\n  policies:\n    - window: {windows: [{cron: "0 2 * * *", duration: 4h, timeZone: Europe/Atlantis}]}\n',
      ),
      code: ErrorCode.PolicyInvalid,
      message:
        /^f\.yaml:6:70: fleet\.policies\[0\]\.window\.windows\[0\]\.timeZone: unknown time zone 'Europe\/Atlantis'$/,
    },
    {
      name: 'a bad cron expression',
      text: 'pools:\n  - name: p\n    policies:\n      - window:\n          windows: [{cron: "0 25 * * *", duration: 4h}]\nmachines: []\n',
      code: ErrorCode.PolicyInvalid,
      message:
        /^f\.yaml:5:28: pools\[0\]\.policies\[0\]\.window\.windows\[0\]\.cron: invalid cron '0 25 \* \* \*'/,
    },
    {
      name: 'an empty window',
      text: 'pools:\n  - name: p\n    policies:\n      - window: {windows: [{cron: "0 2 * * *", duration: 0s}]}\nmachines: []\n',
      code: ErrorCode.PolicyInvalid,
      message:
        /^f\.yaml:4:58: pools\[0\]\.policies\[0\]\.window\.windows\[0\]\.duration: must be a duration above 0 ms/,
    },
    {
      name: 'a rate of 0',
      text: 'pools:\n  - name: p\n    policies:\n      - rate: {count: 0, per: 1h}\nmachines: []\n',
      code: ErrorCode.PolicyInvalid,
      message:
        /^f\.yaml:4:23: pools\[0\]\.policies\[0\]\.rate\.count: must be a whole number of at least 1/,
    },
    {
      name: 'a canary larger than its pool',
      text: minimal('').replace(
        '[{name: p}]',
        '[{name: p, policies: [{canary: {count: 3, soak: 1m}}]}]',
      ),
      code: ErrorCode.PolicyInvalid,
      message:
        /^f\.yaml:1:47: pools\[0\]\.policies\[0\]\.canary\.count: 3 canaries, but pool p has only 1 machines$/,
    },
    {
      name: 'an empty file',
      text: '',
      code: ErrorCode.FleetInvalid,
      message: /^f\.yaml:1:1: expected object, received null$/,
    },
  ];
  for (const c of cases) {
    it(`refuses ${c.name}`, () => {
      const e = failure(c.text);
      assert.equal(e.code, c.code, e.message);
      assert.match(e.message, c.message);
      assert.notEqual(e.hint, undefined);
    });
  }

  it('reads a pool’s drain policy, sent with its rollouts’ upgrades', () => {
    const fleet = parseFleet(
      'pools:\n  - name: workers\n    drain: {timeout: 90s, onTimeout: quarantine-and-skip}\nmachines: []\n',
      { source: 'f.yaml' },
    );
    assert.deepEqual(fleet.pools[0]?.drain, {
      timeoutSeconds: 90,
      onTimeout: 'quarantine-and-skip',
    });
    assert.throws(
      () =>
        parseFleet('pools:\n  - name: w\n    drain: {onTimeout: ignore}\nmachines: []\n', {
          source: 'f.yaml',
        }),
      /drain\.onTimeout/,
    );
  });

  it('reads what a halted rollout of a pool does, and refuses anything but stop or rollback', () => {
    const s = parseFleet(
      'pools:\n  - {name: w, channel: stable, onHalt: rollback}\nmachines: []\n',
    );
    assert.equal(s.pools[0]?.onHalt, 'rollback');
    assert.throws(
      () =>
        parseFleet('pools:\n  - {name: w, onHalt: retry}\nmachines: []\n', { source: 'f.yaml' }),
      /pools\[0\]\.onHalt/,
    );
  });

  it('reads what a pool does with held machines, and refuses anything but wait or skip', () => {
    const s = parseFleet('pools:\n  - {name: w, channel: stable, onHold: skip}\nmachines: []\n');
    assert.equal(s.pools[0]?.onHold, 'skip');
    assert.equal(parseFleet('pools:\n  - {name: w}\nmachines: []\n').pools[0]?.onHold, undefined);
    assert.throws(
      () =>
        parseFleet('pools:\n  - {name: w, onHold: later}\nmachines: []\n', { source: 'f.yaml' }),
      /pools\[0\]\.onHold/,
    );
  });

  it('reads cluster settings, refusing a duplicate and a cluster without control-plane machines', () => {
    const cp = 'machines:\n  - {id: cp-1, role: control-plane, pool: p, cluster: edge}\n';
    const s = parseFleet(
      `pools: [{name: p}]\n${cp}clusters:\n  - {name: edge, smallControlPlane: accept-downtime}\n`,
    );
    assert.deepEqual(s.clusters, [{ name: 'edge', smallControlPlane: 'accept-downtime' }]);
    const noEtcd = failure(`pools: [{name: p}]\n${cp}clusters:\n  - {name: lab}\n`);
    assert.equal(noEtcd.code, 'MOLT_POLICY_INVALID');
    assert.match(
      noEtcd.message,
      /clusters\[0\]\.name: cluster "lab" has no control-plane machine \(no etcd\)/,
    );
    const twice = failure(
      `pools: [{name: p}]\n${cp}clusters:\n  - {name: edge}\n  - {name: edge}\n`,
    );
    assert.match(twice.message, /clusters\[1\]\.name: duplicate name "edge"/);
    const bad = failure(
      `pools: [{name: p}]\n${cp}clusters:\n  - {name: edge, smallControlPlane: yes}\n`,
    );
    assert.match(bad.message, /clusters\[0\]\.smallControlPlane/);
  });

  it("reads a cluster's Kubernetes (docs/adr/0012) with its defaults, and refuses a bad one", () => {
    const cp = 'machines:\n  - {id: cp-1, role: control-plane, pool: p, cluster: edge}\n';
    const s = parseFleet(
      `pools: [{name: p}]\n${cp}clusters:\n  - name: edge\n    kubernetes:\n      version: v1.36.3\n      apiserver: {extraArgs: {audit-log-maxage: "7"}}\n`,
    );
    assert.deepEqual(s.clusters?.[0]?.kubernetes, {
      version: 'v1.36.3',
      apiserver: { extraArgs: { 'audit-log-maxage': '7' } },
      controllerManager: { extraArgs: {} },
      scheduler: { extraArgs: {} },
      finalize: false,
    });
    const bad = failure(
      `pools: [{name: p}]\n${cp}clusters:\n  - {name: edge, kubernetes: {version: "1.36"}}\n`,
    );
    assert.match(
      bad.message,
      /clusters\[0\]\.kubernetes\.version: must be a Kubernetes version like v1.36.3/,
    );
    const unknown = failure(
      `pools: [{name: p}]\n${cp}clusters:\n  - {name: edge, kubernetes: {version: v1.36.3, etcd: {}}}\n`,
    );
    assert.match(unknown.message, /clusters\[0\]\.kubernetes/);
  });

  it('reads promotion, a minimum release age and phased availability of a pool', () => {
    const s = parseFleet(
      'pools:\n  - {name: staging, channel: stable, minReleaseAge: 2h}\n  - {name: prod, promoteFrom: staging, phased: {startFraction: 0.1, duration: 1d}}\nmachines:\n  - {id: m1, pool: prod}\n',
    );
    assert.deepEqual(s.pools, [
      { name: 'staging', policies: [], channel: 'stable', minReleaseAgeMs: 7_200_000 },
      {
        name: 'prod',
        policies: [],
        promoteFrom: 'staging',
        phased: { startFraction: 0.1, durationMs: 86_400_000 },
      },
    ]);
  });

  it('reads a pool’s strategy and provider, and refuses replace without a provider or a non-http one', () => {
    const s = parseFleet(
      'pools:\n  - {name: metal, channel: stable, strategy: replace, provider: {url: "http://127.0.0.1:7070", timeout: 30s}}\n  - {name: vms, channel: stable, strategy: in-place, provider: {url: "https://provider.lab"}}\nmachines: []\n',
    );
    assert.deepEqual(s.pools, [
      {
        name: 'metal',
        policies: [],
        channel: 'stable',
        strategy: 'replace',
        provider: { url: 'http://127.0.0.1:7070', timeoutMs: 30_000 },
      },
      {
        name: 'vms',
        policies: [],
        channel: 'stable',
        strategy: 'in-place',
        provider: { url: 'https://provider.lab' },
      },
    ]);
    const missing = failure('pools:\n  - {name: metal, strategy: replace}\nmachines: []\n');
    assert.equal(missing.code, ErrorCode.FleetInvalid);
    assert.match(missing.message, /pools\[0\]\.strategy: strategy replace needs a provider/);
    const ftp = failure(
      'pools:\n  - {name: metal, strategy: replace, provider: {url: "ftp://x"}}\nmachines: []\n',
    );
    assert.match(ftp.message, /pools\[0\]\.provider\.url: must be an http:\/\/ or https:\/\/ URL/);
    const secret = failure(
      'pools:\n  - {name: metal, strategy: replace, provider: {url: "https://molt:s3cret@provider.lab"}}\nmachines: []\n',
    );
    assert.equal(secret.code, ErrorCode.FleetInvalid);
    assert.match(secret.message, /pools\[0\]\.provider\.url: must not carry a user or password/);
    assert.doesNotMatch(secret.message, /s3cret/);
    const other = failure('pools:\n  - {name: metal, strategy: rebuild}\nmachines: []\n');
    assert.match(other.message, /pools\[0\]\.strategy/);
  });

  it('reads Cluster API as a pool’s provider, and refuses anything more in it', () => {
    const s = parseFleet(
      'pools:\n  - {name: md, strategy: replace, provider: {capi: {}}}\nmachines: []\n',
    );
    assert.deepEqual(s.pools[0]?.provider, { capi: {} });
    for (const provider of [
      '{capi: {cluster: c1}}',
      '{capi: {}, url: "http://x"}',
      '{capi: true}',
    ]) {
      const e = failure(
        `pools:\n  - {name: md, strategy: replace, provider: ${provider}}\nmachines: []\n`,
      );
      assert.equal(e.code, ErrorCode.FleetInvalid, provider);
      assert.match(e.message, /pools\[0\]\.provider/, provider);
    }
  });

  it('refuses a pool that both follows a channel and promotes from another pool', () => {
    const e = failure(
      'pools:\n  - {name: a, channel: stable}\n  - {name: b, channel: beta, promoteFrom: a}\nmachines: []\n',
    );
    assert.equal(e.code, ErrorCode.FleetInvalid);
    assert.match(e.message, /a channel or promotes from another pool/);
  });

  it('lists several shape problems at once', () => {
    const e = failure('pools: [{name: p, colour: red}]\nmachines:\n  - {id: 7, pool: p}\n');
    assert.equal(e.code, ErrorCode.FleetInvalid);
    const lines = e.message.split('\n  ');
    assert.equal(lines.length, 2);
    assert.match(lines[0] ?? '', /^f\.yaml:1:19: pools\[0\]: unknown field "colour"$/);
    assert.match(
      lines[1] ?? '',
      /^f\.yaml:3:10: machines\[0\]\.id: expected string, received number$/,
    );
  });
});

describe('durations', () => {
  it('reads the units and their combinations', () => {
    assert.equal(parseDuration('90s'), 90_000);
    assert.equal(parseDuration('30m'), 1_800_000);
    assert.equal(parseDuration('2h'), 2 * H);
    assert.equal(parseDuration('1d'), 24 * H);
    assert.equal(parseDuration('1h30m'), 1.5 * H);
    assert.equal(parseDuration('0s'), 0);
  });

  it('rejects garbage', () => {
    for (const bad of ['', '10', 'm', '1x', '1.5h', '-1h', '30m1h', '1h 30m', '1 h', 'PT1H']) {
      assert.equal(parseDuration(bad), undefined, bad);
    }
  });

  it('formats what it reads', () => {
    assert.equal(formatDuration(4_800_000), '1h20m');
    assert.equal(formatDuration(90_000), '1m30s');
    assert.equal(formatDuration(0), '0s');
    assert.equal(formatDuration(26 * H), '1d2h');
    assert.equal(parseDuration(formatDuration(26 * H + 61_000)), 26 * H + 61_000);
  });
});
