// SPDX-License-Identifier: Apache-2.0
/**
 * Real Kubernetes nodes on molt machines (docs/adr/0015), as a user runs it:
 * `molt lab up --vms 2 --workers 0` (the VMs' release 1.0.0 carries containerd 2 and the previous
 * minor's kubelet; they join the lab's cluster by TLS bootstrap), the lab's workloads then run as
 * real containers on them, the VMs sit on the lab's bridge (their own InternalIPs, `kubectl logs`
 * and `exec`, pod to pod across VMs through molt's routes), and `molt lab publish 1.1.0 --vm` (the current kubelet) rolls through
 * the operator: canary, then the other VM, each cordoned, drained through the PodDisruptionBudgets,
 * really rebooted, Ready again with the new kubelet, uncordoned. A sampler reads the budgets and
 * the Nodes every second throughout and the test fails on any sample with fewer healthy pods than
 * a budget allows. A release whose kubelet cannot start falls back by itself; last, an upgrade
 * with `--no-preserve` wipes a node's EPHEMERAL: containerd's store is gone (the node pulls again)
 * while the kubelet's certificate on STATE keeps its identity.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { readLabStateFile } from '../../src/lab/state.ts';
import { issueToDir } from '../../src/platform/pki/store.ts';
import { readSerial, serialSize } from '../../src/lab/vm/serial-log.ts';
import { assertOnBridge } from './harness/bridge-checks.ts';
import type { AgentStatus } from '../../src/protocol/agent.ts';
import {
  assertJoined,
  assertPodsInContainers,
  bootstrapCount,
  KubeletAfter,
  KubeletBefore,
  nodeLab,
  nodeReady,
  placePod,
  podReady,
  publishAndFollow,
  watchBudgets,
} from './harness/node-lab.ts';

const Minutes = 60_000;

describe('real Kubernetes nodes on molt VMs: join, containers, a rolling upgrade under PDBs', () => {
  const lab = nodeLab(2, join(import.meta.dirname, '../../.molt/vm-nodes-molt-config.yaml'));
  const Vms = lab.vms;

  it('joins each VM by TLS bootstrap: its own Node, Ready, the release’s kubelet, the pool label from the lab', async () => {
    await assertJoined(lab, KubeletBefore);
  });

  it('runs the lab’s workloads as real containers on the VMs', async () => {
    await assertPodsInContainers(lab);
  });

  it('puts the VMs on the lab bridge: each Node’s own InternalIP, kubectl logs and exec through it, a pod reaching a pod on the other VM', async () => {
    await assertOnBridge(lab);
  });

  it('upgrades both nodes under live pods: drained through the PDBs, NotReady through the real reboot, Ready on the new kubelet, uncordoned', async () => {
    const watch = await watchBudgets(lab);
    const final = await publishAndFollow(lab, '1.1.0').finally(() => watch.stop());
    const { samples, violations } = await watch.stop();
    assert.equal(final.state, 'Completed', JSON.stringify(final));
    assert.equal(final.counts.Succeeded, Vms.length, JSON.stringify(final.counts));
    assert.ok(samples.length > 30, `sampled throughout (${String(samples.length)} samples)`);
    assert.deepEqual(violations, [], 'no sample with fewer healthy pods than a budget allows');
    for (const name of Vms) {
      const seen = samples.map((s) => s.nodes[name]).filter((n) => n !== undefined);
      assert.ok(
        seen.some((n) => n.unschedulable),
        `${name} was cordoned`,
      );
      assert.ok(
        seen.some((n) => !n.ready),
        `${name} went NotReady through its reboot`,
      );
      const node = await lab.core().readNode({ name });
      assert.ok(nodeReady(node), `${name} Ready again`);
      assert.notEqual(node.spec?.unschedulable, true, `${name} uncordoned`);
      assert.equal(
        node.status?.nodeInfo?.kubeletVersion,
        KubeletAfter,
        `${name} runs release 1.1.0's kubelet`,
      );
    }
    const pods = (await lab.core().listNamespacedPod({ namespace: 'shop' })).items;
    assert.equal(pods.filter(podReady).length, 9, 'every workload pod Ready at the end');
  });

  it('rolls a release whose kubelet cannot start back by itself: the canary falls back to 1.1.0 at its health deadline, the rollout halts, no node is left cordoned', async () => {
    const vms = (await readLabStateFile(lab.dir()))?.vms ?? [];
    assert.equal(vms.length, Vms.length, 'the VMs in lab.json');
    const from = new Map(
      await Promise.all(vms.map(async (v) => [v.name, await serialSize(v.serialLog)] as const)),
    );
    const watch = await watchBudgets(lab);
    const final = await publishAndFollow(lab, '1.2.0', ['--broken-kubelet']).finally(() =>
      watch.stop(),
    );
    const { samples, violations } = await watch.stop();
    assert.equal(final.state, 'Halted', JSON.stringify(final));
    assert.equal(final.counts.Succeeded, 0, JSON.stringify(final.counts));
    assert.equal(final.counts.RolledBack, 1, JSON.stringify(final.counts));
    const canary = final.machines.find((m) => m.phase === 'RolledBack');
    assert.ok(canary !== undefined, JSON.stringify(final.machines));
    assert.match(canary.reason ?? '', /MOLT_HEALTH_DEADLINE/, 'failed its health deadline');
    for (const m of final.machines.filter((x) => x.machine !== canary.machine))
      assert.equal(m.phase, 'Pending', `${m.machine} was never started after the canary failed`);

    // The canary really booted 1.2.0, then fell back to 1.1.0 on slot B; the other never left it.
    const boots = new Map<string, { slot: string; version: string; bootId: string }[]>();
    for (const v of vms) {
      const console_ = await readSerial(v.serialLog, from.get(v.name) ?? 0);
      boots.set(
        v.name,
        [...console_.matchAll(/MOLT-BOOTED slot=(\w) version=(\S+) boot=(\S+)/g)].map((m) => ({
          slot: m[1] ?? '',
          version: m[2] ?? '',
          bootId: m[3] ?? '',
        })),
      );
    }
    const seen = (boots.get(canary.machine) ?? []).map((b) => `${b.slot} ${b.version}`);
    const tried = seen.indexOf('A 1.2.0');
    assert.ok(tried >= 0, `${canary.machine} booted 1.2.0 from slot A: ${JSON.stringify(seen)}`);
    assert.equal(seen.at(-1), 'B 1.1.0', `${canary.machine} fell back to 1.1.0 on slot B`);
    assert.ok(seen.lastIndexOf('B 1.1.0') > tried, `${canary.machine}: 1.1.0 again after 1.2.0`);
    for (const v of vms.filter((x) => x.name !== canary.machine))
      assert.deepEqual(boots.get(v.name), [], `${v.name} did not reboot`);

    // Why, as `molt node status` shows it: the kubelet of the 1.2.0 boot never reported.
    const status = JSON.parse(
      await lab.molt(['node', 'status', canary.machine, '-o', 'json'], lab.env()),
    ) as AgentStatus;
    assert.equal(status.bootedSlot, 'B');
    assert.equal(status.version, '1.1.0');
    assert.equal(status.last?.result, 'RolledBack', JSON.stringify(status.last));
    const bad = status.slots.find((x) => x.slot === 'A');
    assert.equal(bad?.status, 'bad');
    assert.match(
      bad.badReason ?? '',
      /kube-node-ready \(node vm-\d's kubelet has not reported since this boot \(its Node says boot \S+, this is \S+\)\)/,
    );

    const cordoned = samples.filter((x) => x.nodes[canary.machine]?.unschedulable === true);
    assert.ok(cordoned.length > 0, `${canary.machine} was cordoned for its reboot`);
    assert.deepEqual(violations, [], 'no sample with fewer healthy pods than a budget allows');

    // The fallback uncordoned the canary at once; its kubelet (1.1.0's) reports its new boot soon after.
    const deadline = Date.now() + 5 * Minutes;
    const lastBoot: string | undefined = boots.get(canary.machine)?.at(-1)?.bootId;
    for (;;) {
      const nodes = await Promise.all(Vms.map((name) => lab.core().readNode({ name })));
      const pods = (await lab.core().listNamespacedPod({ namespace: 'shop' })).items;
      const settled =
        nodes.every((n) => nodeReady(n) && n.spec?.unschedulable !== true) &&
        nodes.find((n) => n.metadata?.name === canary.machine)?.status?.nodeInfo?.bootID ===
          lastBoot &&
        pods.filter(podReady).length === 9;
      if (settled) break;
      if (Date.now() > deadline) {
        const view = nodes.map((n) => ({
          name: n.metadata?.name,
          ready: nodeReady(n),
          unschedulable: n.spec?.unschedulable === true,
          bootID: n.status?.nodeInfo?.bootID,
        }));
        assert.fail(
          `not settled 5 min after the halt: nodes ${JSON.stringify(view)} (canary's last boot ${String(lastBoot)}), ${String(pods.filter(podReady).length)} of 9 pods Ready`,
        );
      }
      await new Promise((r) => setTimeout(r, 2_000));
    }
    for (const name of Vms)
      assert.equal(
        (await lab.core().readNode({ name })).status?.nodeInfo?.kubeletVersion,
        KubeletAfter,
        `${name} runs release 1.1.0's kubelet`,
      );
  });

  it('wipes a node on request (`molt node upgrade --no-preserve`): containerd’s store is gone, the node pulls its pods’ images again and keeps its identity', async () => {
    const state = await readLabStateFile(lab.dir());
    assert.ok(state !== undefined);
    const machine = Vms.at(-1) ?? '';
    const status = async (): Promise<AgentStatus> =>
      JSON.parse(
        await lab.molt(['node', 'status', machine, '-o', 'json'], lab.env()),
      ) as AgentStatus;
    const before = await status();
    const digest = before.slots.find((x) => x.slot === before.bootedSlot)?.digest ?? '';
    assert.match(digest, /^sha256:/, JSON.stringify(before.slots));
    const joins = await bootstrapCount(lab);
    const web = (await lab.core().listNamespacedPod({ namespace: 'shop' })).items.find((p) =>
      p.metadata?.name?.startsWith('web-'),
    );
    const template = { image: web?.spec?.containers[0]?.image ?? '' };
    assert.notEqual(template.image, '', 'the web pods’ image');
    const held = (await lab.core().readNode({ name: machine })).status?.images ?? [];
    assert.ok(
      held.some((i) => i.names?.includes(template.image)),
      `${machine} holds ${template.image} before the wipe: ${JSON.stringify(held.map((i) => i.names))}`,
    );
    const bootBefore = (await lab.core().readNode({ name: machine })).status?.nodeInfo?.bootID;

    // The image it runs again, EPHEMERAL wiped on the way: --force (the same image) is an
    // admin's, so a person's certificate, not the operator's the lab's context holds.
    const admin = await issueToDir({
      caDir: state.pki,
      outDir: join(lab.dir(), 'admin'),
      role: 'admin',
      name: 'tester',
      sans: [],
      days: 1,
    });
    const out = await lab.molt(
      [
        ...[
          'node',
          'upgrade',
          machine,
          '--image',
          `${state.registry}/${state.repository}@${digest}`,
        ],
        ...['--no-preserve', '--force', '--follow'],
      ],
      { ...lab.env(), MOLT_CERT: admin.cert, MOLT_KEY: admin.key },
    );
    const after = await status();
    assert.equal(after.last?.result, 'Succeeded', `${JSON.stringify(after.last)}\n${out}`);
    assert.equal(after.version, before.version, 'the same release');
    assert.notEqual(after.bootedSlot, before.bootedSlot, 'on the other slot');

    // The agent drained it for the reboot, so a pod is placed on it: its image, which the node
    // held before (its Node listed it), is pulled anew — a kept EPHEMERAL says "already present".
    const deadline = Date.now() + 8 * Minutes;
    for (;;) {
      const node = await lab.core().readNode({ name: machine });
      const rebooted = node.status?.nodeInfo?.bootID !== bootBefore;
      if (rebooted && nodeReady(node) && node.spec?.unschedulable !== true) break;
      if (Date.now() > deadline)
        assert.fail(`${machine} not back 8 min after the wipe: rebooted ${String(rebooted)}`);
      await new Promise((r) => setTimeout(r, 2_000));
    }
    const probe = `wiped-${machine}`;
    await placePod(lab, probe, machine, template.image);
    let pulled: string[];
    for (const until = Date.now() + 4 * Minutes; ;) {
      const pod = await lab.core().readNamespacedPod({ namespace: 'shop', name: probe });
      pulled = (await lab.core().listNamespacedEvent({ namespace: 'shop' })).items
        .filter((e) => e.involvedObject.name === probe && e.reason === 'Pulled')
        .map((e) => e.message ?? '');
      if (podReady(pod) && pulled.length > 0) break;
      if (Date.now() > until) assert.fail(`${probe} not Ready in 4 min: ${JSON.stringify(pulled)}`);
      await new Promise((r) => setTimeout(r, 2_000));
    }
    await lab.core().deleteNamespacedPod({ namespace: 'shop', name: probe });
    assert.ok(
      pulled.some((m) => /Successfully pulled image/.test(m)),
      `pulled again after the wipe: ${JSON.stringify(pulled)}`,
    );
    // The kubelet's certificate is on STATE: the node came back without joining again.
    assert.equal(await bootstrapCount(lab), joins, 'no new bootstrap CSR');
  });
});
