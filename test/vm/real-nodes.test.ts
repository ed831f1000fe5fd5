// SPDX-License-Identifier: Apache-2.0
/**
 * Real Kubernetes nodes on molt machines (docs/adr/0015), as a user runs it:
 * `molt lab up --vms 2 --workers 0` (the VMs' release 1.0.0 carries containerd 2 and the previous
 * minor's kubelet; they join the lab's cluster by TLS bootstrap), the lab's workloads then run as
 * real containers on them, and `molt lab publish 1.1.0 --vm` (the current kubelet) rolls through
 * the operator: canary, then the other VM, each cordoned, drained through the PodDisruptionBudgets,
 * really rebooted, Ready again with the new kubelet, uncordoned. A sampler reads the budgets and
 * the Nodes every second throughout and the test fails on any sample with fewer healthy pods than
 * a budget allows.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import {
  CertificatesV1Api,
  CoreV1Api,
  PolicyV1Api,
  type V1Node,
  type V1Pod,
} from '@kubernetes/client-node';
import { readLabStateFile } from '../../src/lab/state.ts';
import { readSerial, serialSize } from '../../src/lab/vm/serial-log.ts';
import type { AgentStatus } from '../../src/protocol/agent.ts';
import { loadKubeConfig } from '../../src/platform/kube/client.ts';
import { PoolLabel } from '../../src/protocol/kube-resources.ts';
import type { RolloutSummaryView, RolloutView } from '../../src/protocol/operator.ts';

const run = promisify(execFile);
const repoRoot = join(import.meta.dirname, '../..');
const moltBin = join(repoRoot, 'src/bin/molt.ts');
const keep = process.env['MOLT_VM_KEEP'] === '1';
const Minutes = 60_000;
const cliConfig = join(repoRoot, '.molt', 'vm-nodes-molt-config.yaml');
const Vms = ['vm-1', 'vm-2'];
/** The kubelets of releases 1.0.0 (the previous minor) and 1.1.0 (the current one). */
const versions = new Map(
  [
    ...(await readFile(join(repoRoot, 'scripts/kube-versions.env'), 'utf8')).matchAll(
      /^(\w+)=(\S+)$/gm,
    ),
  ].map((m): [string, string] => [m[1] ?? '', m[2] ?? '']),
);
const [KubeletBefore, KubeletAfter] = [
  versions.get('KUBERNETES_PREVIOUS'),
  versions.get('KUBERNETES'),
];

async function molt(args: readonly string[], env: Record<string, string> = {}): Promise<string> {
  const r = await run(process.execPath, [moltBin, ...args], {
    env: { ...process.env, MOLT_CONFIG: cliConfig, ...env },
    maxBuffer: 64 * 2 ** 20,
    timeout: 40 * Minutes,
  });
  return r.stdout;
}

const ready = (n: V1Node): boolean =>
  (n.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
const podReady = (p: V1Pod): boolean =>
  p.metadata?.deletionTimestamp == null &&
  (p.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');

interface Sample {
  readonly at: number;
  /** Ready pods per app label, against each budget's minAvailable. */
  readonly healthy: Record<string, number>;
  readonly nodes: Record<string, { ready: boolean; unschedulable: boolean; kubelet: string }>;
}

/** One look at the workloads' healthy pods and the VMs' Nodes. */
async function sample(core: CoreV1Api, minimum: Record<string, number>): Promise<Sample> {
  const at = Date.now();
  const [pods, nodes] = await Promise.all([
    core.listNamespacedPod({ namespace: 'shop' }),
    core.listNode(),
  ]);
  const healthy: Record<string, number> = {};
  for (const app of Object.keys(minimum))
    healthy[app] = pods.items.filter(
      (p) => p.metadata?.labels?.['app'] === app && podReady(p),
    ).length;
  const view: Sample['nodes'] = {};
  for (const n of nodes.items.filter((x) => Vms.includes(x.metadata?.name ?? '')))
    view[n.metadata?.name ?? ''] = {
      ready: ready(n),
      unschedulable: n.spec?.unschedulable === true,
      kubelet: n.status?.nodeInfo?.kubeletVersion ?? '',
    };
  return { at, healthy, nodes: view };
}

describe('real Kubernetes nodes on molt VMs: join, containers, a rolling upgrade under PDBs', () => {
  let dir = '';
  let env: Record<string, string> = {};
  let core: CoreV1Api;
  let policy: PolicyV1Api;
  let certificates: CertificatesV1Api;

  before(async () => {
    dir = await mkdtemp(join(repoRoot, '.molt', 'lab-nodes-'));
    const t = performance.now();
    await molt([
      ...['lab', 'up', '--dir', dir, '--vms', String(Vms.length), '--workers', '0'],
      ...['--fast', '--network', 'loopback'],
    ]);
    const state = await readLabStateFile(dir);
    assert.ok(state !== undefined, 'lab.json written');
    console.log(
      `lab up with ${String(Vms.length)} VM nodes: ${String(Math.round((performance.now() - t) / 1000))} s`,
    );
    env = JSON.parse(await molt(['lab', 'env', '--dir', dir, '-o', 'json'])) as Record<
      string,
      string
    >;
    assert.ok(state.kubeconfig !== undefined, 'the lab runs Kubernetes');
    const kc = await loadKubeConfig(state.kubeconfig);
    core = kc.makeApiClient(CoreV1Api);
    policy = kc.makeApiClient(PolicyV1Api);
    certificates = kc.makeApiClient(CertificatesV1Api);
  });
  after(async () => {
    if (dir === '') return;
    await molt(['lab', 'down', '--dir', dir]).catch((e: unknown) => {
      console.log(`lab down: ${String(e)}`);
    });
    if (!keep) await rm(dir, { recursive: true, force: true });
  });

  it('joins each VM by TLS bootstrap: its own Node, Ready, the release’s kubelet, the pool label from the lab', async () => {
    const csrs = (await certificates.listCertificateSigningRequest()).items;
    for (const name of Vms) {
      const node = await core.readNode({ name });
      assert.ok(ready(node), `${name} Ready`);
      assert.equal(
        node.status?.nodeInfo?.kubeletVersion,
        KubeletBefore,
        `${name}: release 1.0.0's kubelet`,
      );
      assert.match(node.status?.nodeInfo?.containerRuntimeVersion ?? '', /^containerd:\/\/2\./);
      assert.equal(node.metadata?.labels?.[PoolLabel], 'vms');
      const csr = csrs.find(
        (c) =>
          c.spec.username?.startsWith('system:bootstrap:') === true &&
          Buffer.from(c.spec.request, 'base64').length > 0 &&
          (c.status?.certificate ?? '') !== '' &&
          c.spec.signerName === 'kubernetes.io/kube-apiserver-client-kubelet' &&
          (c.status?.conditions ?? []).some((x) => x.type === 'Approved'),
      );
      assert.ok(
        csr !== undefined,
        `an approved, signed kubelet CSR from a bootstrap token: ${JSON.stringify(csrs.map((c) => c.spec.username))}`,
      );
    }
  });

  it('runs the lab’s workloads as real containers on the VMs', async () => {
    const pods = (await core.listNamespacedPod({ namespace: 'shop' })).items;
    assert.equal(pods.filter(podReady).length, 9, 'shop/web 6 and shop/db 3 Ready');
    for (const p of pods) {
      assert.ok(Vms.includes(p.spec?.nodeName ?? ''), `${p.metadata?.name ?? ''} on a VM`);
      const c = p.status?.containerStatuses?.[0];
      assert.match(c?.containerID ?? '', /^containerd:\/\/[0-9a-f]{64}$/, 'a containerd container');
      assert.ok(c?.state?.running?.startedAt !== undefined, 'running');
      assert.match(c.imageID, /@sha256:[0-9a-f]{64}$/, 'pulled by digest from the lab registry');
    }
  });

  it('upgrades both nodes under live pods: drained through the PDBs, NotReady through the real reboot, Ready on the new kubelet, uncordoned', async () => {
    const samples: Sample[] = [];
    const budgets = (await policy.listNamespacedPodDisruptionBudget({ namespace: 'shop' })).items;
    const minimum = Object.fromEntries(
      budgets.map((b) => [
        b.spec?.selector?.matchLabels?.['app'] ?? '',
        Number(b.spec?.minAvailable ?? 0),
      ]),
    );
    const sampling = { on: true };
    const sampler = (async () => {
      while (sampling.on) {
        const s = await sample(core, minimum).catch(() => undefined);
        if (s !== undefined) samples.push(s);
        await new Promise((r) => setTimeout(r, 1_000));
      }
    })();
    try {
      const t = performance.now();
      await molt(['lab', 'publish', '1.1.0', '--vm', '--dir', dir]);
      let id = '';
      for (let i = 0; id === '' && i < 300; i++) {
        const list = JSON.parse(
          await molt(['rollout', 'list', '-o', 'json'], env),
        ) as RolloutSummaryView[];
        id = list.find((r) => r.target.version === '1.1.0' && r.pool === 'vms')?.id ?? '';
        if (id === '') await new Promise((r) => setTimeout(r, 2_000));
      }
      assert.notEqual(id, '', 'the operator created a rollout of 1.1.0 for pool vms');
      const lines = (
        await molt(
          ['rollout', 'status', id, '--follow', '-o', 'json', '--reconnect-timeout', '900000'],
          env,
        )
      )
        .trim()
        .split('\n');
      const final = JSON.parse(lines.at(-1) ?? '{}') as RolloutView;
      console.log(
        `rollout of 1.1.0 across ${String(Vms.length)} VM nodes: ${String(Math.round((performance.now() - t) / 1000))} s`,
      );
      assert.equal(final.state, 'Completed', JSON.stringify(final));
      assert.equal(final.counts.Succeeded, Vms.length, JSON.stringify(final.counts));
    } finally {
      sampling.on = false;
      await sampler;
    }
    assert.ok(samples.length > 30, `sampled throughout (${String(samples.length)} samples)`);
    const violations = samples.filter((s) =>
      Object.entries(minimum).some(([app, min]) => (s.healthy[app] ?? 0) < min),
    );
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
      const node = await core.readNode({ name });
      assert.ok(ready(node), `${name} Ready again`);
      assert.notEqual(node.spec?.unschedulable, true, `${name} uncordoned`);
      assert.equal(
        node.status?.nodeInfo?.kubeletVersion,
        KubeletAfter,
        `${name} runs release 1.1.0's kubelet`,
      );
    }
    const pods = (await core.listNamespacedPod({ namespace: 'shop' })).items;
    assert.equal(pods.filter(podReady).length, 9, 'every workload pod Ready at the end');
  });

  it('rolls a release whose kubelet cannot start back by itself: the canary falls back to 1.1.0 at its health deadline, the rollout halts, no node is left cordoned', async () => {
    const vms = (await readLabStateFile(dir))?.vms ?? [];
    assert.equal(vms.length, Vms.length, 'the VMs in lab.json');
    const from = new Map(
      await Promise.all(vms.map(async (v) => [v.name, await serialSize(v.serialLog)] as const)),
    );
    const budgets = (await policy.listNamespacedPodDisruptionBudget({ namespace: 'shop' })).items;
    const minimum = Object.fromEntries(
      budgets.map((b) => [
        b.spec?.selector?.matchLabels?.['app'] ?? '',
        Number(b.spec?.minAvailable ?? 0),
      ]),
    );
    const samples: Sample[] = [];
    const sampling = { on: true };
    const sampler = (async () => {
      while (sampling.on) {
        const s = await sample(core, minimum).catch(() => undefined);
        if (s !== undefined) samples.push(s);
        await new Promise((r) => setTimeout(r, 1_000));
      }
    })();
    let final: RolloutView;
    try {
      const t = performance.now();
      await molt(['lab', 'publish', '1.2.0', '--vm', '--broken-kubelet', '--dir', dir]);
      let id = '';
      for (let i = 0; id === '' && i < 300; i++) {
        const list = JSON.parse(
          await molt(['rollout', 'list', '-o', 'json'], env),
        ) as RolloutSummaryView[];
        id = list.find((r) => r.target.version === '1.2.0' && r.pool === 'vms')?.id ?? '';
        if (id === '') await new Promise((r) => setTimeout(r, 2_000));
      }
      assert.notEqual(id, '', 'the operator created a rollout of 1.2.0 for pool vms');
      // A halted rollout exits non-zero: its last line is still the rollout as it ended.
      const out = await molt(
        ['rollout', 'status', id, '--follow', '-o', 'json', '--reconnect-timeout', '900000'],
        env,
      ).catch((e: unknown) => {
        const stdout = (e as { stdout?: unknown }).stdout;
        if (typeof stdout === 'string' && stdout.trim() !== '') return stdout;
        throw e;
      });
      final = JSON.parse(out.trim().split('\n').at(-1) ?? '{}') as RolloutView;
      console.log(
        `rollout of 1.2.0 (a kubelet that cannot start) halted after ${String(Math.round((performance.now() - t) / 1000))} s`,
      );
    } finally {
      sampling.on = false;
      await sampler;
    }
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
      await molt(['node', 'status', canary.machine, '-o', 'json'], env),
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
    const violations = samples.filter((x) =>
      Object.entries(minimum).some(([app, min]) => (x.healthy[app] ?? 0) < min),
    );
    assert.deepEqual(violations, [], 'no sample with fewer healthy pods than a budget allows');

    // The fallback uncordoned the canary at once; its kubelet (1.1.0's) reports its new boot soon after.
    const deadline = Date.now() + 5 * Minutes;
    const lastBoot: string | undefined = boots.get(canary.machine)?.at(-1)?.bootId;
    for (;;) {
      const nodes = await Promise.all(Vms.map((name) => core.readNode({ name })));
      const pods = (await core.listNamespacedPod({ namespace: 'shop' })).items;
      const settled =
        nodes.every((n) => ready(n) && n.spec?.unschedulable !== true) &&
        nodes.find((n) => n.metadata?.name === canary.machine)?.status?.nodeInfo?.bootID ===
          lastBoot &&
        pods.filter(podReady).length === 9;
      if (settled) break;
      if (Date.now() > deadline) {
        const view = nodes.map((n) => ({
          name: n.metadata?.name,
          ready: ready(n),
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
        (await core.readNode({ name })).status?.nodeInfo?.kubeletVersion,
        KubeletAfter,
        `${name} runs release 1.1.0's kubelet`,
      );
  });
});
