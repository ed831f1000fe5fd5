// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { KubernetesClusterSpec } from '../../protocol/kube-cluster.ts';
import { declaredKubernetesCluster } from '../adapters/kube-declared/read.ts';
import { proposePlan } from '../kubernetes/propose.ts';
import { world } from '../kubernetes/fixtures.test.ts';
import { declaredKubernetes, kubeClusterStatus } from './declared-kubernetes.ts';

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
