// SPDX-License-Identifier: Apache-2.0
/**
 * A whole cluster born on molt machines (docs/adr/0018 §3–4), as a user starts it:
 * `molt lab up --vms 2 --vm-control-planes 1 --workers 0`. No control plane runs on the host: the
 * lab makes the cluster's PKI, `molt install --kube-pki` lays it onto the control-plane VM's
 * STATE, and that VM's agent renders etcd's drop-in and kube-apiserver, kube-controller-manager
 * and kube-scheduler as systemd units, starts them and bootstraps the cluster (RBAC and the PKI's
 * token). Its own kubelet and the worker VMs' join with that token, and the lab's workloads run on
 * the workers. Each step's time is printed: TCG's cost of a control plane is what this measures.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { CoordinationV1Api, VersionApi } from '@kubernetes/client-node';
import { readLabStateFile } from '../../src/lab/state.ts';
import { issueToDir } from '../../src/platform/pki/store.ts';
import { loadKubeConfig } from '../../src/platform/kube/client.ts';
import { PoolLabel } from '../../src/protocol/kube-resources.ts';
import type { MachineView } from '../../src/protocol/operator-machines.ts';
import {
  assertJoined,
  assertPodsInContainers,
  followRollout,
  KubeletAfter,
  KubeletBefore,
  nodeLab,
  nodeReady,
} from './harness/node-lab.ts';
import { applyKubernetesCluster, endedPlan, kubeStatus, planIds } from './harness/kube-plans.ts';
import { VmClusterName } from '../../src/lab/vm/vm-cluster.ts';

describe('a cluster on molt VMs: its control plane as systemd units on a control-plane VM', () => {
  // Two workers: a drain under the workloads' PodDisruptionBudgets needs a node to move them to
  // (with one, molt rightly keeps the worker's drain waiting until its timeout).
  const lab = nodeLab(2, join(import.meta.dirname, '../../.molt/vm-cluster-molt-config.yaml'), [
    '--vm-control-planes',
    '1',
  ]);

  it('serves the API from the control-plane VM at its bridge address, on the version its image carries', async () => {
    const state = await readLabStateFile(lab.dir());
    const kc = await loadKubeConfig(state?.kubeconfig ?? '');
    const server = kc.getCurrentCluster()?.server ?? '';
    assert.match(server, /^https:\/\/10\.231\.\d+\.\d+:6443$/, 'the VM’s address, not the host’s');
    // Each API server holds an identity Lease labelled with its host's name.
    const leases = await kc.makeApiClient(CoordinationV1Api).listNamespacedLease({
      namespace: 'kube-system',
      labelSelector: 'apiserver.kubernetes.io/identity=kube-apiserver',
    });
    assert.deepEqual(
      leases.items.map((l) => l.metadata?.labels?.['kubernetes.io/hostname']),
      ['vm-cp-1'],
      'one API server, on vm-cp-1',
    );
    const node = await lab.core().readNode({ name: 'vm-cp-1' });
    assert.ok(nodeReady(node), 'the control plane’s own kubelet joined: vm-cp-1 Ready');
    assert.equal(node.status?.nodeInfo?.kubeletVersion, KubeletBefore);
    assert.equal(node.metadata?.labels?.[PoolLabel], 'vm-control-plane');
  });

  it('joins the worker VMs with the token the control plane registered', async () => {
    await assertJoined(lab, KubeletBefore);
  });

  it('schedules and runs the lab’s workloads on the workers (the controller manager and scheduler on the VM work)', async () => {
    await assertPodsInContainers(lab);
  });

  it('lists the control-plane VM in the operator’s fleet as a control plane of its cluster', async () => {
    const machines = JSON.parse(
      await lab.molt(['machine', 'list', '-o', 'json'], lab.env()),
    ) as MachineView[];
    const cp = machines.find((m) => m.id === 'vm-cp-1');
    assert.deepEqual(
      { role: cp?.role, pool: cp?.pool, cluster: cp?.cluster },
      { role: 'control-plane', pool: 'vm-control-plane', cluster: 'lab-vms' },
    );
  });

  it('rolls release 1.1.0 over the control plane (its downtime accepted: one control plane) and then the workers; the API comes back', async () => {
    const api = watchApi(lab);
    await lab.molt(['lab', 'publish', '1.1.0', '--vm', '--dir', lab.dir()]);
    const cp = await followRollout(lab, '1.1.0', 'vm-control-plane');
    const workers = await followRollout(lab, '1.1.0', 'vms');
    const { longestGapS, samples } = api.stop();
    console.log(`API downtime through the control plane's upgrade: ${String(longestGapS)} s`);
    assert.equal(cp.state, 'Completed', JSON.stringify(cp));
    assert.equal(workers.state, 'Completed', JSON.stringify(workers));
    // The workers are nodes of that cluster: its control plane went first.
    const cpDone = cp.machines[0]?.finishedAt ?? '';
    for (const m of workers.machines)
      assert.ok(
        Date.parse(m.startedAt ?? '') >= Date.parse(cpDone),
        `${m.machine} started at ${String(m.startedAt)}, after the control plane (${cpDone})`,
      );
    assert.ok(
      longestGapS > 0,
      `the API was down while its only control plane rebooted (${String(samples)} samples)`,
    );
    const machines = JSON.parse(
      await lab.molt(['machine', 'list', '-o', 'json'], lab.env()),
    ) as MachineView[];
    for (const id of ['vm-cp-1', ...lab.vms])
      assert.equal(machines.find((m) => m.id === id)?.observed?.version, '1.1.0', id);
    for (const name of ['vm-cp-1', ...lab.vms])
      assert.ok(nodeReady(await lab.core().readNode({ name })), `${name} Ready again`);
    await assertPodsInContainers(lab);
  });
  it('rolls itself back when the declared KubernetesCluster gives the new scheduler a flag it refuses: every unit on vm-cp-1 back on the old minor', async () => {
    await publishKubernetes(lab);
    const known = await planIds(lab, VmClusterName);
    const t = performance.now();
    await applyKubernetesCluster(lab, VmClusterName, {
      version: KubeletAfter,
      scheduler: { extraArgs: { 'no-such-flag': 'x' } },
    });
    const plan = await endedPlan(lab, VmClusterName, KubeletAfter, known);
    console.log(`a refused flag, rolled back on vm-cp-1: ${seconds(t)} s`);
    assert.equal(plan.phase, 'RolledBack', JSON.stringify(plan, null, 1));
    const failed = plan.steps.find((s) => s.state === 'failed');
    assert.equal(failed?.component, 'kube-scheduler', JSON.stringify(plan.steps));
    assert.match(failed.error ?? '', /MOLT_KUBE_COMPONENT_UNHEALTHY/);
    assert.equal(
      await servedVersion(lab),
      KubeletBefore,
      'the API server is back on the old minor',
    );
    const status = await kubeStatus(lab, VmClusterName);
    const components = status.machines.flatMap((m) => m.components);
    for (const c of components.filter((x) => x.name.startsWith('kube-')))
      assert.deepEqual([c.name, c.version, c.healthy], [c.name, KubeletBefore, true]);
  });

  it('upgrades the cluster’s Kubernetes one minor as configuration: the bundle pulled onto vm-cp-1, its components restarted as systemd units', async () => {
    const known = await planIds(lab, VmClusterName);
    const t = performance.now();
    await applyKubernetesCluster(lab, VmClusterName, { version: KubeletAfter });
    const plan = await endedPlan(lab, VmClusterName, KubeletAfter, known);
    console.log(`Kubernetes ${KubeletBefore} → ${KubeletAfter} on vm-cp-1: ${seconds(t)} s`);
    assert.equal(plan.phase, 'Succeeded', JSON.stringify(plan, null, 1));
    assert.deepEqual(
      plan.steps.filter((s) => s.action === 'apply').map((s) => s.component),
      ['kube-apiserver', 'kube-controller-manager', 'kube-scheduler'],
    );
    assert.equal(
      await servedVersion(lab),
      KubeletAfter,
      'the API server on vm-cp-1 runs the new minor',
    );
    for (const name of ['vm-cp-1', ...lab.vms])
      assert.ok(nodeReady(await lab.core().readNode({ name })), `${name} Ready`);
    await assertPodsInContainers(lab);
  });

  it('restores the control-plane VM’s etcd from a snapshot with `molt cluster recover`: what the snapshot held is back, what came after is gone', async () => {
    const state = await readLabStateFile(lab.dir());
    assert.ok(state !== undefined);
    const admin = await issueToDir({
      ...{ caDir: state.pki, outDir: join(lab.dir(), 'recover-admin') },
      ...{ role: 'admin', name: 'recoverer', sans: [], days: 1 },
    });
    const env = { ...lab.env(), MOLT_CERT: admin.cert, MOLT_KEY: admin.key };
    const namespace = 'recovery';
    const cm = (name: string) => ({ namespace, body: { metadata: { name }, data: { n: name } } });
    await lab.core().createNamespace({ body: { metadata: { name: namespace } } });
    await lab.core().createNamespacedConfigMap(cm('before-snapshot'));
    const snapshot = join(lab.dir(), 'recover-admin', 'etcd.snapshot');
    await lab.molt(['node', 'etcd', 'snapshot', 'vm-cp-1', '--output', snapshot], env);
    await lab.core().createNamespacedConfigMap(cm('after-snapshot'));

    const t = performance.now();
    const out = await lab.molt(
      ['cluster', 'recover', '--etcd-snapshot', snapshot, '--machine', 'vm-cp-1'],
      env,
    );
    for (const component of ['kube-apiserver', 'kube-controller-manager', 'kube-scheduler'])
      await lab.molt(['node', 'service', 'start', component, 'vm-cp-1'], env);
    const back = await untilAnswered(() =>
      lab.core().readNamespacedConfigMap({ namespace, name: 'before-snapshot' }),
    );
    console.log(`etcd of vm-cp-1 restored, API back: ${seconds(t)} s\n${out}`);
    assert.match(out, /^snapshot .*: \d+ bytes, revision \d+, \d+ keys$/m);
    assert.equal(back.data?.['n'], 'before-snapshot');
    await assert.rejects(
      lab.core().readNamespacedConfigMap({ namespace, name: 'after-snapshot' }),
      (e: { code?: number }) => e.code === 404,
      'what was written after the snapshot is gone: the data is the snapshot’s',
    );
    for (const name of ['vm-cp-1', ...lab.vms])
      assert.ok(nodeReady(await lab.core().readNode({ name })), `${name} Ready after the restore`);
  });
});

const seconds = (since: number): string => String(Math.round((performance.now() - since) / 1000));

/** `read()`'s answer once the API serves again (its restarted API server on a TCG VM). */
async function untilAnswered<T>(read: () => Promise<T>, timeoutMs = 15 * 60_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await read();
    } catch (e) {
      if (Date.now() > until) throw e;
      await new Promise((r) => setTimeout(r, 5_000)); // a poll interval under a deadline
    }
  }
}

/** The lab's Kubernetes bundle of the next minor, published beside its releases. */
/**
 * Both minors as Kubernetes bundles: the new one to go to, and the one the cluster runs, which a
 * plan must be able to roll back to (the operator plans nothing without it).
 */
async function publishKubernetes(lab: ReturnType<typeof nodeLab>): Promise<void> {
  const state = await readLabStateFile(lab.dir());
  assert.ok(state !== undefined);
  for (const version of [KubeletBefore, KubeletAfter])
    await lab.molt([
      ...['dev', 'publish-kubernetes', '--version', version],
      ...['--registry', state.registry, '--repository', `${state.repository}-kubernetes`],
      '--insecure',
    ]);
}

/** The version the cluster's API server says it is. */
async function servedVersion(lab: ReturnType<typeof nodeLab>): Promise<string> {
  const state = await readLabStateFile(lab.dir());
  const kc = await loadKubeConfig(state?.kubeconfig ?? '');
  return (await kc.makeApiClient(VersionApi).getCode()).gitVersion;
}

/** Sample the API every 2 s; the longest run of failed answers, in seconds. */
function watchApi(lab: ReturnType<typeof nodeLab>) {
  let failingSince: number | undefined;
  let longest = 0;
  let samples = 0;
  let busy = false;
  const timer = setInterval(() => {
    if (busy) return;
    busy = true;
    const t = performance.now();
    void lab
      .core()
      .readNamespace({ name: 'default' })
      .then(
        () => {
          if (failingSince !== undefined) longest = Math.max(longest, t - failingSince);
          failingSince = undefined;
        },
        () => {
          failingSince ??= t;
        },
      )
      .finally(() => {
        samples++;
        busy = false;
      });
  }, 2_000);
  return {
    stop() {
      clearInterval(timer);
      return { longestGapS: Math.round(longest / 1000), samples };
    },
  };
}
