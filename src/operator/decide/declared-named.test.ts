// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { KubernetesClusterSpec } from '../../protocol/kube-cluster.ts';
import { declaredImagePolicy, declaredKubernetesCluster } from '../adapters/kube-declared/read.ts';
import { proposePlan } from '../kubernetes/propose.ts';
import { world } from '../kubernetes/fixtures.test.ts';
import { declaredImages, declaredKubernetes, kubeClusterStatus } from './declared-named.ts';

const spec = (version: string) => KubernetesClusterSpec.parse({ version });

describe('declared KubernetesClusters', () => {
  it('parses the spec with the fleet file’s schema and names the field of a problem', () => {
    const ok = declaredKubernetesCluster({
      metadata: { name: 'default', generation: 2 },
      spec: { version: 'v1.36.3', apiserver: { extraArgs: { 'audit-log-maxage': '7' } } },
    });
    assert.ok('spec' in ok);
    assert.equal(ok.spec.version, 'v1.36.3');
    assert.deepEqual(ok.spec.apiserver.extraArgs, { 'audit-log-maxage': '7' });
    assert.deepEqual(ok.spec.scheduler.extraArgs, {});
    assert.equal(ok.spec.finalize, false);
    const bad = declaredKubernetesCluster({ metadata: { name: 'x' }, spec: { version: '1.36' } });
    assert.ok('invalid' in bad);
    assert.match(bad.invalid, /^spec\.version: must be a Kubernetes version/);
    const flag = declaredKubernetesCluster({
      metadata: { name: 'x' },
      spec: { version: 'v1.36.3', scheduler: { extraArgs: { '--v': '4' } } },
    });
    assert.ok('invalid' in flag);
    assert.match(flag.invalid, /^spec\.scheduler\.extraArgs\.--v/);
  });

  it('accepts valid objects and keeps the last accepted spec when a new one is refused', () => {
    const first = declaredKubernetes({
      objects: [{ name: 'default', spec: spec('v1.35.4'), generation: 1 }],
      file: new Map(),
      lastAccepted: new Map(),
    });
    assert.equal(first.specs.get('default')?.version, 'v1.35.4');
    assert.deepEqual(
      first.verdicts.map((v) => [v.kind, v.accepted, v.reason]),
      [['KubernetesCluster', true, 'Accepted']],
    );
    const typo = declaredKubernetes({
      objects: [{ name: 'default', invalid: 'spec.version: bad', generation: 2 }],
      file: new Map(),
      lastAccepted: first.accepted,
    });
    assert.equal(typo.specs.get('default')?.version, 'v1.35.4', 'no upgrade, no downgrade');
    const [v] = typo.verdicts;
    assert.ok(v !== undefined && !v.accepted);
    assert.match(v.message, /last accepted spec \(v1\.35\.4\) stays/);
    const never = declaredKubernetes({
      objects: [{ name: 'edge', invalid: 'spec.version: bad', generation: 1 }],
      file: new Map(),
      lastAccepted: new Map(),
    });
    assert.equal(never.specs.has('edge'), false);
    assert.match(never.verdicts[0]?.message ?? '', /nothing of it is in force/);
  });

  it('leaves a cluster the fleet file configures to the file', () => {
    const r = declaredKubernetes({
      objects: [{ name: 'default', spec: spec('v1.36.3'), generation: 1 }],
      file: new Map([['default', spec('v1.35.4')]]),
      lastAccepted: new Map(),
    });
    assert.equal(r.specs.get('default')?.version, 'v1.35.4');
    assert.equal(r.verdicts[0]?.reason, 'DefinedInFleetFile');
  });

  it('puts the desired version in force, who set it and the latest plan in the status', async () => {
    const w = await world();
    const plan = await proposePlan(w.deps(), {
      cluster: 'default',
      kind: 'upgrade',
      spec: spec('v1.36.3'),
      by: 'alice',
    });
    const status = kubeClusterStatus({
      desired: { spec: spec('v1.36.3'), by: 'alice' },
      plan: {
        ...plan,
        phase: 'Running',
        steps: plan.steps.map((s, i) => (i < 3 ? { ...s, state: 'done' } : s)),
      },
    });
    assert.deepEqual(status.desired, { version: 'v1.36.3', finalize: false, by: 'alice' });
    assert.deepEqual(status.plan, {
      id: plan.id,
      kind: 'upgrade',
      phase: 'Running',
      target: 'v1.36.3',
      by: 'alice',
      progress: `3/${String(plan.steps.length)}`,
    });
    assert.deepEqual(kubeClusterStatus({ desired: undefined, plan: undefined }), {
      desired: null,
      plan: null,
    });
  });
});

describe('declared ImagePolicies', () => {
  const spec = {
    repository: 'registry.example.com/acme/web',
    follow: 'rebuilds',
    workloads: [{ namespaces: ['shop'] }],
  };

  it('reads an object with the fleet file’s schema, named by the object, problems by spec field', () => {
    const ok = declaredImagePolicy({ metadata: { name: 'web', generation: 3 }, spec });
    assert.ok('policy' in ok);
    assert.equal(ok.policy.name, 'web');
    assert.deepEqual(ok.policy.follow, { kind: 'rebuilds' });
    assert.equal(ok.generation, 3);
    const none = declaredImagePolicy({
      metadata: { name: 'web' },
      spec: { ...spec, workloads: [] },
    });
    assert.ok('invalid' in none);
    assert.match(none.invalid, /^spec\.workloads: names no workload/);
  });

  it('merges objects with the fleet file’s policies: the file wins a name, a refused edit keeps the last accepted', () => {
    const read = (s: Record<string, unknown>, generation: number) =>
      declaredImagePolicy({ metadata: { name: 'web', generation }, spec: s });
    const file = declaredImagePolicy({ metadata: { name: 'dns' }, spec });
    assert.ok('policy' in file);
    const first = declaredImages({
      objects: [read(spec, 1)],
      file: [file.policy],
      lastAccepted: new Map(),
    });
    assert.deepEqual([...first.specs.keys()].sort(), ['dns', 'web']);
    assert.equal(first.verdicts[0]?.reason, 'Accepted');
    const typo = declaredImages({
      objects: [read({ ...spec, follow: 'latest' }, 2)],
      file: [],
      lastAccepted: first.accepted,
    });
    assert.equal(typo.specs.get('web')?.follow.kind, 'rebuilds');
    assert.match(
      typo.verdicts[0]?.message ?? '',
      /spec\.follow: must be rebuilds.*last accepted spec \(registry\.example\.com\/acme\/web, follow rebuilds\) stays/,
    );
    const clash = declaredImages({
      objects: [declaredImagePolicy({ metadata: { name: 'dns' }, spec })],
      file: [file.policy],
      lastAccepted: new Map(),
    });
    const [v] = clash.verdicts;
    assert.ok(v !== undefined);
    assert.equal(v.reason, 'DefinedInFleetFile');
    assert.match(v.message, /image policy dns is configured by the operator's fleet file/);
  });
});
