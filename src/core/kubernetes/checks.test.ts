// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { runChecks, type CheckInput } from './checks.ts';
import { bundle, three } from './fixtures.test.ts';

const ok = (over: Partial<CheckInput> = {}): CheckInput => ({
  machines: three('v1.35.4'),
  target: { version: 'v1.36.3', extraArgs: {} },
  bundle: bundle('v1.36.3'),
  bundleName: 'reg/acme/installer-kubernetes:v1.36.3',
  releases: ['cp-1', 'cp-2', 'cp-3'].map((machine) => ({
    machine,
    version: '1.4.0',
    kubernetes: '>=1.35.0 <1.37.0',
  })),
  metrics: '',
  etcd: { healthy: true, message: '3 members, leader cp-1' },
  ...over,
});

describe('the checks before a Kubernetes plan moves anything', () => {
  it('passes a good upgrade, naming each check', () => {
    const r = runChecks(ok());
    assert.equal(r.refusal, undefined);
    assert.deepEqual(
      r.checks.map((c) => c.name),
      ['path', 'bundle', 'releases', 'flags', 'removed-apis', 'etcd'],
    );
    assert.ok(r.checks.every((c) => c.ok));
    assert.match(r.checks[0]?.message ?? '', /v1.35.4 → v1.36.3 \(minor-upgrade, emulating 1.35\)/);
  });

  it('refuses a version with no bundle', () => {
    const r = runChecks(ok({ bundle: undefined }));
    assert.equal(r.refusal?.code, 'MOLT_KUBE_BUNDLE_NOT_FOUND');
    assert.match(r.refusal.message, /installer-kubernetes:v1.36.3/);
  });

  it('refuses a skipped minor', () => {
    assert.equal(
      runChecks(ok({ target: { version: 'v1.37.1', extraArgs: {} } })).refusal?.code,
      'MOLT_KUBE_VERSION_SKEW',
    );
  });

  it('refuses a minor downgrade outside the window, with the reason', () => {
    const r = runChecks(
      ok({ machines: three('v1.36.3'), target: { version: 'v1.35.4', extraArgs: {} } }),
    );
    assert.equal(r.refusal?.code, 'MOLT_KUBE_DOWNGRADE_WINDOW');
    assert.match(r.refusal.message, /finalized/);
  });

  it("refuses when a machine's release does not admit the target, or is unknown", () => {
    const r = runChecks(
      ok({
        releases: [
          { machine: 'cp-1', version: '1.3.0', kubernetes: '<1.36.0' },
          { machine: 'cp-2' },
        ],
      }),
    );
    assert.equal(r.refusal?.code, 'MOLT_KUBE_RELEASE_INCOMPATIBLE');
    assert.match(
      r.refusal.message,
      /cp-1's release 1.3.0 supports Kubernetes <1.36.0; cp-2 boots no release/,
    );
    assert.equal(
      runChecks(ok({ releases: [{ machine: 'cp-1', version: '1.0.0' }] })).refusal,
      undefined,
    );
  });

  it('refuses a configuration with a flag the target removed', () => {
    const r = runChecks(
      ok({
        target: { version: 'v1.36.3', extraArgs: { 'kube-apiserver': { 'insecure-port': '0' } } },
      }),
    );
    assert.equal(r.refusal?.code, 'MOLT_KUBE_FLAG_REMOVED');
    assert.match(r.refusal.message, /kube-apiserver --insecure-port \(removed in 1.24\)/);
  });

  it('refuses removed APIs in use, and says when it could not look', () => {
    const metrics =
      'apiserver_requested_deprecated_apis{group="flowcontrol.apiserver.k8s.io",removed_release="1.36",resource="flowschemas",subresource="",version="v1beta3"} 1\n';
    assert.equal(runChecks(ok({ metrics })).refusal?.code, 'MOLT_KUBE_REMOVED_API_IN_USE');
    const blind = runChecks(ok({ metrics: undefined }));
    assert.equal(blind.refusal, undefined);
    assert.match(blind.checks.find((c) => c.name === 'removed-apis')?.message ?? '', /not checked/);
  });

  it('refuses an unhealthy etcd, and reports the first refusal in check order', () => {
    assert.equal(
      runChecks(ok({ etcd: { healthy: false, message: 'no leader' } })).refusal?.code,
      'MOLT_ETCD_UNHEALTHY',
    );
    const both = runChecks(ok({ bundle: undefined, etcd: { healthy: false, message: 'x' } }));
    assert.equal(both.refusal?.code, 'MOLT_KUBE_BUNDLE_NOT_FOUND');
    assert.equal(both.checks.filter((c) => !c.ok).length, 2);
  });
});
