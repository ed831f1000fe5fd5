// SPDX-License-Identifier: Apache-2.0
/**
 * Self-hosted and back again (docs/adr/0017, 0018): `molt lab up --vms 2 --workers 0 --operator
 * cluster` installs the operator as a user does — its image built and pushed to the lab's
 * registry, `kubectl apply -k` — so its two replicas run on the two VM nodes, one leading by
 * Lease, with its records in the cluster (`store: kubernetes`). Then `molt lab publish 1.1.0
 * --vm` rolls through the nodes the operator runs on: each is drained (the operator's pod evicted
 * under its PodDisruptionBudget), rebooted and upgraded, so every replica's node is drained in
 * turn and the Lease changes hands. The rollout must complete with every machine started exactly
 * once (the store's start records) and none forgotten; the CLI follows it throughout through the
 * lab's relay to whichever replica leads.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { CoordinationV1Api } from '@kubernetes/client-node';
import { createKubeOperatorStore } from '../../src/operator/adapters/kube-store/operator-store.ts';
import { readLabStateFile } from '../../src/lab/state.ts';
import { loadKubeConfig } from '../../src/platform/kube/client.ts';
import { startsPerMachine } from '../../src/testkit/rollout-timing.ts';
import {
  KubeletAfter,
  nodeLab,
  nodeReady,
  podReady,
  publishAndFollow,
  watchBudgets,
} from './harness/node-lab.ts';

const Namespace = 'molt-system';
const Selector = 'app.kubernetes.io/name=molt-operator';

/** Who held the operator's Lease, and where its pods ran, every two seconds. */
interface LeaseSample {
  readonly at: number;
  readonly holder: string;
  readonly renewedAgoMs: number;
  readonly pods: Record<string, string>;
}

describe('the operator inside the cluster it upgrades: self-hosted and back again', () => {
  const lab = nodeLab(2, join(import.meta.dirname, '../../.molt/vm-self-hosted-molt-config.yaml'), [
    '--operator',
    'cluster',
  ]);
  const leases = async () =>
    (await loadKubeConfig((await readLabStateFile(lab.dir()))?.kubeconfig ?? '')).makeApiClient(
      CoordinationV1Api,
    );

  it('runs as two replicas on the VM nodes, one of them holding the Lease', async () => {
    const pods = (
      await lab.core().listNamespacedPod({ namespace: Namespace, labelSelector: Selector })
    ).items.filter(podReady);
    assert.equal(pods.length, 2, 'two Ready replicas');
    for (const p of pods) {
      assert.ok(lab.vms.includes(p.spec?.nodeName ?? ''), `${p.metadata?.name ?? ''} on a VM`);
      assert.match(
        p.status?.containerStatuses?.[0]?.imageID ?? '',
        /molt\/operator@sha256:[0-9a-f]{64}$/,
        'the image molt built, from the lab registry',
      );
    }
    const lease = await (
      await leases()
    ).readNamespacedLease({ namespace: Namespace, name: 'molt-operator' });
    const holder = lease.spec?.holderIdentity ?? '';
    assert.ok(
      pods.some((p) => holder.startsWith(`${p.metadata?.name ?? '?'}-`)),
      `a replica holds the Lease: ${holder}`,
    );
  });

  it('upgrades the nodes it runs on: each replica’s node drained in turn, the Lease handed over, every machine started once, none forgotten', async () => {
    const api = await leases();
    const samples: LeaseSample[] = [];
    const sampling = { on: true };
    const sampler = (async () => {
      while (sampling.on) {
        const [lease, pods] = await Promise.all([
          api.readNamespacedLease({ namespace: Namespace, name: 'molt-operator' }),
          lab.core().listNamespacedPod({ namespace: Namespace, labelSelector: Selector }),
        ]).catch(() => [undefined, undefined] as const);
        if (lease !== undefined)
          samples.push({
            at: Date.now(),
            holder: lease.spec?.holderIdentity ?? '',
            renewedAgoMs: Date.now() - new Date(lease.spec?.renewTime ?? 0).getTime(),
            pods: Object.fromEntries(
              pods.items
                .filter(podReady)
                .map((p) => [p.metadata?.name ?? '', p.spec?.nodeName ?? '']),
            ),
          });
        await new Promise((r) => setTimeout(r, 2_000));
      }
    })();
    const watch = await watchBudgets(lab);
    const final = await publishAndFollow(lab, '1.1.0').finally(async () => {
      sampling.on = false;
      await sampler;
      await watch.stop();
    });
    const { violations } = await watch.stop();
    assert.equal(final.state, 'Completed', JSON.stringify(final));
    assert.equal(final.counts.Succeeded, lab.vms.length, JSON.stringify(final.counts));
    assert.deepEqual(violations, [], 'the workloads’ budgets held');

    // The store (OperatorRecords): this rollout started each machine once, and only its pool's.
    const state = await readLabStateFile(lab.dir());
    const store = createKubeOperatorStore({
      kc: await loadKubeConfig(state?.kubeconfig ?? ''),
      namespace: Namespace,
    });
    try {
      const read = await store.read();
      const rollout = read.rollouts.find((r) => r.id === final.id);
      assert.ok(rollout !== undefined, 'the rollout is in the cluster’s OperatorRecords');
      const counts = startsPerMachine(read.starts.filter((s) => s.rollout === final.id));
      assert.deepEqual(
        [...counts.keys()].sort(),
        lab.vms.map((v) => `${final.id}/${v}`).sort(),
        'each VM started, nothing else',
      );
      for (const [key, n] of counts) assert.equal(n, 1, `${key} started ${String(n)} times`);
      for (const v of lab.vms)
        assert.equal(rollout.machines[v]?.phase, 'Succeeded', `${v} not forgotten`);
    } finally {
      await store.close();
    }

    // Every replica's node was drained in turn, and the Lease changed hands on the way.
    const holders = [...new Set(samples.map((s) => s.holder).filter((h) => h !== ''))];
    assert.ok(holders.length >= 2, `the Lease changed hands: ${JSON.stringify(holders)}`);
    const hosts = new Set(samples.flatMap((s) => Object.values(s.pods)));
    assert.deepEqual([...hosts].sort(), [...lab.vms].sort(), 'replicas ran on both VMs');
    // How long the cluster went without a live leader (a Lease not renewed within its 10 s TTL).
    let worst = 0;
    let since: number | undefined;
    for (const s of samples) {
      const live = s.holder !== '' && s.renewedAgoMs <= 10_000;
      if (live) since = undefined;
      else {
        since ??= s.at;
        worst = Math.max(worst, s.at - since);
      }
    }
    console.log(
      `self-hosted rollout: Lease holders ${holders.join(' → ')}; longest without a live leader ${String(Math.round(worst / 1000))} s`,
    );
    assert.ok(worst <= 60_000, `without a leader for ${String(worst)} ms`);
    for (const name of lab.vms) {
      const node = await lab.core().readNode({ name });
      assert.ok(nodeReady(node), `${name} Ready again`);
      assert.equal(node.status?.nodeInfo?.kubeletVersion, KubeletAfter, `${name} on 1.1.0`);
    }
    const pods = (
      await lab.core().listNamespacedPod({ namespace: Namespace, labelSelector: Selector })
    ).items.filter(podReady);
    assert.equal(pods.length, 2, 'both replicas Ready at the end');
  });
});
