// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ErrorCode, isMoltError } from '../core/errors.ts';
import { parseFleet } from './fleet.ts';

const fleet = (images: string): string => `
pools: [{name: w}]
machines: []
images:
${images}`;

const refused = (images: string): string => {
  try {
    parseFleet(fleet(images), { source: 'fleet.yaml' });
  } catch (e) {
    assert.ok(isMoltError(e, ErrorCode.FleetInvalid), String(e));
    return e.message;
  }
  assert.fail('the fleet file was accepted');
};

describe('image policies in the fleet file', () => {
  it('reads a policy into core’s model: follow, selectors, canary, policies, GM pins', () => {
    const f = parseFleet(
      fleet(`  - name: web
    repository: registry.example.com:5000/acme/web
    follow: rebuilds
    workloads: [{namespaces: [shop], kinds: [Deployment], matchLabels: {tier: front}}]
    canary: {namespaces: [shop-canary], soak: 10m}
    policies: [{rate: {count: 5, per: 1h}}, {failureBudget: 0}]
    progressTimeout: 5m
    gm: [{digest: "sha256:${'a'.repeat(64)}", reason: GM of 4.0}]
  - name: dns
    repository: registry.example.com/k8s/coredns
    follow: {semver: "~1.11.0"}
    workloads: [{namespaces: [kube-system], names: [coredns]}]`),
    );
    assert.deepEqual(f.images?.[0], {
      name: 'web',
      repository: 'registry.example.com:5000/acme/web',
      follow: { kind: 'rebuilds' },
      workloads: [{ namespaces: ['shop'], kinds: ['Deployment'], matchLabels: { tier: 'front' } }],
      canary: { namespaces: ['shop-canary'], soakMs: 600_000 },
      policies: [
        { kind: 'rate', count: 5, periodMs: 3_600_000 },
        { kind: 'failure-budget', maxFailed: 0 },
      ],
      progressTimeoutMs: 300_000,
      gm: [{ digest: `sha256:${'a'.repeat(64)}`, reason: 'GM of 4.0' }],
    });
    assert.deepEqual(f.images[1]?.follow, { kind: 'semver', range: '~1.11.0' });
  });

  const bad: [string, string, RegExp][] = [
    [
      'a policy naming no workload',
      '  - {name: web, repository: r.example.com/a/web, follow: rebuilds, workloads: []}',
      /images\[0\]\.workloads.*names no workload/,
    ],
    [
      'a repository with a tag',
      '  - {name: web, repository: "r.example.com/a/web:1.0", follow: rebuilds, workloads: [{namespaces: [shop], names: [web]}]}',
      /images\[0\]\.repository.*no tag or digest/,
    ],
    [
      'a follow that is no tier',
      '  - {name: web, repository: r.example.com/a/web, follow: latest, workloads: [{namespaces: [shop], names: [web]}]}',
      /images\[0\]\.follow.*rebuilds, revisions or \{semver/,
    ],
    [
      'a semver range that is not one',
      '  - {name: web, repository: r.example.com/a/web, follow: {semver: "not a range"}, workloads: [{namespaces: [shop], names: [web]}]}',
      /images\[0\]\.follow\.semver.*not a semver range/,
    ],
    [
      'a GM pin that is no digest',
      '  - {name: web, repository: r.example.com/a/web, follow: rebuilds, workloads: [{namespaces: [shop], names: [web]}], gm: [{digest: "1.0", reason: x}]}',
      /gm\[0\]\.digest.*sha256/,
    ],
    [
      'a canary naming nothing',
      '  - {name: web, repository: r.example.com/a/web, follow: rebuilds, workloads: [{namespaces: [shop], names: [web]}], canary: {soak: 1m}}',
      /canary.*names namespaces or workloads/,
    ],
    [
      'a machine-only policy',
      '  - {name: web, repository: r.example.com/a/web, follow: rebuilds, workloads: [{namespaces: [shop], names: [web]}], policies: [{controlPlaneFirst: true}]}',
      /images\[0\]\.policies.*machine policies/,
    ],
    [
      'a gate (a workload is healthy when its own rollout is available)',
      '  - {name: web, repository: r.example.com/a/web, follow: rebuilds, workloads: [{namespaces: [shop], names: [web]}], policies: [{gate: {name: g, url: "http://127.0.0.1/ok"}}]}',
      /images\[0\]\.policies.*gate are machine policies/,
    ],
    [
      'a canary given twice',
      '  - {name: web, repository: r.example.com/a/web, follow: rebuilds, workloads: [{namespaces: [shop], names: [web]}], canary: {namespaces: [c]}, policies: [{canary: {count: 1}}]}',
      /images\[0\]\.canary.*given twice/,
    ],
  ];
  for (const [what, images, message] of bad)
    it(`refuses ${what}, naming the field`, () => {
      assert.match(refused(images), message);
    });
});
