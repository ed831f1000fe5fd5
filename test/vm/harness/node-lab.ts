// SPDX-License-Identifier: Apache-2.0
/**
 * A lab whose VMs are real Kubernetes nodes (docs/adr/0015), as a user starts it —
 * `molt lab up --vms N --workers 0` — and the checks every scenario on it starts from: each VM
 * joined by TLS bootstrap as its own Node, Ready, on release 1.0.0's kubelet, in its pool; the
 * lab's workloads running as real containerd containers on the VMs.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { cp, mkdir, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { after, before } from 'node:test';
import { promisify } from 'node:util';
import {
  CertificatesV1Api,
  CoreV1Api,
  PolicyV1Api,
  type V1Node,
  type V1Pod,
} from '@kubernetes/client-node';
import { readLabStateFile } from '../../../src/lab/state.ts';
import { loadKubeConfig } from '../../../src/platform/kube/client.ts';
import { PoolLabel } from '../../../src/protocol/kube-resources.ts';
import type { RolloutSummaryView, RolloutView } from '../../../src/protocol/operator.ts';

const run = promisify(execFile);
const repoRoot = join(import.meta.dirname, '../../..');
const moltBin = join(repoRoot, 'src/bin/molt.ts');
const Minutes = 60_000;

/** The kubelets of the lab's releases: 1.0.0 the previous minor's, later ones the current. */
const versions = new Map(
  [
    ...(await readFile(join(repoRoot, 'scripts/kube-versions.env'), 'utf8')).matchAll(
      /^(\w+)=(\S+)$/gm,
    ),
  ].map((m): [string, string] => [m[1] ?? '', m[2] ?? '']),
);
export const KubeletBefore = versions.get('KUBERNETES_PREVIOUS') ?? '';
export const KubeletAfter = versions.get('KUBERNETES') ?? '';

export const nodeReady = (n: V1Node): boolean =>
  (n.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
export const podReady = (p: V1Pod): boolean =>
  p.metadata?.deletionTimestamp == null &&
  (p.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');

export interface NodeLab {
  /** The VMs' names (`vm-1` …), their Nodes' names too. */
  readonly vms: readonly string[];
  readonly dir: () => string;
  /** `molt ARGS…` against this lab (its CLI context, or `env`). */
  molt(args: readonly string[], env?: Record<string, string>): Promise<string>;
  /** `molt lab env -o json`: what `molt rollout …` needs to reach the lab's operator. */
  readonly env: () => Record<string, string>;
  readonly core: () => CoreV1Api;
  readonly policy: () => PolicyV1Api;
  readonly certificates: () => CertificatesV1Api;
}

/**
 * Start the lab in `before` and stop it in `after` of the enclosing suite; `cliConfig` names the
 * CLI config file the lab's context goes into (one per test file, never the real home's), and
 * `flags` are more of `molt lab up`'s.
 */
export function nodeLab(count: number, cliConfig: string, flags: readonly string[] = []): NodeLab {
  const vms = Array.from({ length: count }, (_, i) => `vm-${String(i + 1)}`);
  const keep = process.env['MOLT_VM_KEEP'] === '1';
  let dir = '';
  let env: Record<string, string> = {};
  let clients: { core: CoreV1Api; policy: PolicyV1Api; certificates: CertificatesV1Api };
  const molt = async (args: readonly string[], extra: Record<string, string> = {}) =>
    (
      await run(process.execPath, [moltBin, ...args], {
        env: { ...process.env, MOLT_CONFIG: cliConfig, ...extra },
        maxBuffer: 64 * 2 ** 20,
        timeout: 40 * Minutes,
      })
    ).stdout;
  before(async () => {
    dir = await mkdtemp(join(repoRoot, '.molt', 'lab-nodes-'));
    const t = performance.now();
    await molt([
      ...['lab', 'up', '--dir', dir, '--vms', String(count), '--workers', '0'],
      // netns: the VMs join the lab's bridge (docs/adr/0018), as run as root by default.
      ...['--fast', '--network', 'netns', ...flags],
    ]);
    const state = await readLabStateFile(dir);
    assert.ok(state?.kubeconfig !== undefined, 'lab.json names the lab’s kubeconfig');
    console.log(
      `lab up with ${String(count)} VM node(s): ${String(Math.round((performance.now() - t) / 1000))} s`,
    );
    env = JSON.parse(await molt(['lab', 'env', '--dir', dir, '-o', 'json'])) as Record<
      string,
      string
    >;
    const kc = await loadKubeConfig(state.kubeconfig);
    clients = {
      core: kc.makeApiClient(CoreV1Api),
      policy: kc.makeApiClient(PolicyV1Api),
      certificates: kc.makeApiClient(CertificatesV1Api),
    };
  });
  after(async () => {
    if (dir === '') return;
    await molt(['lab', 'down', '--dir', dir]).catch((e: unknown) => {
      console.log(`lab down: ${String(e)}`);
    });
    await keepLogs(dir);
    if (!keep) await rm(dir, { recursive: true, force: true });
  });
  return {
    vms,
    dir: () => dir,
    molt,
    env: () => env,
    core: () => clients.core,
    policy: () => clients.policy,
    certificates: () => clients.certificates,
  };
}

/**
 * The lab's logs and each VM's console, kept under `.molt/vm-logs/<lab>/` when the lab's own
 * directory goes: a failed scenario on a machine that took an hour to get there must leave what
 * it saw.
 */
async function keepLogs(dir: string): Promise<void> {
  const to = join(repoRoot, '.molt', 'vm-logs', basename(dir));
  await cp(join(dir, 'logs'), join(to, 'logs'), { recursive: true }).catch(() => undefined);
  const vmsDir = join(dir, 'vms');
  for (const vm of await readdir(vmsDir).catch(() => [])) {
    await mkdir(join(to, vm), { recursive: true });
    await cp(join(vmsDir, vm, 'serial.log'), join(to, vm, 'serial.log')).catch(() => undefined);
  }
  console.log(`the lab's logs and consoles: ${to}`);
}

/** The node names the kubelet certificates the cluster issued through bootstrap CSRs are for. */
async function bootstrappedNodes(lab: NodeLab): Promise<string[]> {
  const csrs = (await lab.certificates().listCertificateSigningRequest()).items;
  return csrs
    .filter(
      (c) =>
        c.spec.username?.startsWith('system:bootstrap:') === true &&
        c.spec.signerName === 'kubernetes.io/kube-apiserver-client-kubelet' &&
        (c.status?.conditions ?? []).some((x) => x.type === 'Approved') &&
        (c.status?.certificate ?? '') !== '',
    )
    .map((c) => {
      const cert = new X509Certificate(Buffer.from(c.status?.certificate ?? '', 'base64'));
      return /CN=system:node:([^\n,]+)/.exec(cert.subject)?.[1] ?? '';
    });
}

/** A bare pod `name` on node `node`, sleeping in `image` (pulled only when the node lacks it). */
export async function placePod(
  lab: NodeLab,
  name: string,
  node: string,
  image: string,
): Promise<void> {
  await lab.core().createNamespacedPod({
    namespace: 'shop',
    body: {
      metadata: { name },
      spec: {
        nodeName: node,
        terminationGracePeriodSeconds: 0,
        containers: [
          { name: 'probe', image, imagePullPolicy: 'IfNotPresent', command: ['sleep', '3600'] },
        ],
      },
    },
  });
}

/** How many kubelet certificates the cluster issued through bootstrap CSRs (a join each). */
export async function bootstrapCount(lab: NodeLab): Promise<number> {
  return (await bootstrappedNodes(lab)).length;
}

/** Each VM joined by TLS bootstrap: its own Node, Ready, on `kubelet`, in pool `vms`. */
export async function assertJoined(lab: NodeLab, kubelet: string): Promise<void> {
  const issued = await bootstrappedNodes(lab);
  for (const name of lab.vms) {
    const node = await lab.core().readNode({ name });
    assert.ok(nodeReady(node), `${name} Ready`);
    assert.equal(node.status?.nodeInfo?.kubeletVersion, kubelet, `${name}: the release's kubelet`);
    assert.match(node.status.nodeInfo.containerRuntimeVersion, /^containerd:\/\/2\./);
    assert.equal(
      node.metadata?.labels?.[PoolLabel],
      'vms',
      `${name}: the pool label, from the lab`,
    );
    assert.ok(
      issued.includes(name),
      `${name}'s kubelet certificate came from an approved bootstrap CSR: ${JSON.stringify(issued)}`,
    );
  }
}

/** The lab's 9 workload pods Ready, each a running containerd container on a VM. */
export async function assertPodsInContainers(lab: NodeLab): Promise<void> {
  const pods = (await lab.core().listNamespacedPod({ namespace: 'shop' })).items;
  assert.equal(pods.filter(podReady).length, 9, 'shop/web 6 and shop/db 3 Ready');
  for (const p of pods) {
    assert.ok(lab.vms.includes(p.spec?.nodeName ?? ''), `${p.metadata?.name ?? ''} on a VM`);
    const c = p.status?.containerStatuses?.[0];
    assert.match(c?.containerID ?? '', /^containerd:\/\/[0-9a-f]{64}$/, 'a containerd container');
    assert.ok(c?.state?.running?.startedAt !== undefined, 'running');
    assert.match(c.imageID, /@sha256:[0-9a-f]{64}$/, 'pulled by digest from the lab registry');
  }
}

/** One look at the workloads' healthy pods and the VMs' Nodes. */
export interface Sample {
  readonly at: number;
  /** Ready pods per app label, against each budget's minAvailable. */
  readonly healthy: Record<string, number>;
  readonly nodes: Record<string, { ready: boolean; unschedulable: boolean; kubelet: string }>;
}

async function sample(lab: NodeLab, minimum: Record<string, number>): Promise<Sample> {
  const at = Date.now();
  const [pods, nodes] = await Promise.all([
    lab.core().listNamespacedPod({ namespace: 'shop' }),
    lab.core().listNode(),
  ]);
  const healthy: Record<string, number> = {};
  for (const app of Object.keys(minimum))
    healthy[app] = pods.items.filter(
      (p) => p.metadata?.labels?.['app'] === app && podReady(p),
    ).length;
  const view: Sample['nodes'] = {};
  for (const n of nodes.items.filter((x) => lab.vms.includes(x.metadata?.name ?? '')))
    view[n.metadata?.name ?? ''] = {
      ready: nodeReady(n),
      unschedulable: n.spec?.unschedulable === true,
      kubelet: n.status?.nodeInfo?.kubeletVersion ?? '',
    };
  return { at, healthy, nodes: view };
}

export interface BudgetWatch {
  /** Stop sampling; the samples, and those with fewer healthy pods than a budget allows. */
  stop(): Promise<{ samples: Sample[]; violations: Sample[] }>;
}

/** Sample the PodDisruptionBudgets of `shop` and the VMs' Nodes every second until stopped. */
export async function watchBudgets(lab: NodeLab): Promise<BudgetWatch> {
  const budgets = (await lab.policy().listNamespacedPodDisruptionBudget({ namespace: 'shop' }))
    .items;
  const minimum = Object.fromEntries(
    budgets.map((b) => [
      b.spec?.selector?.matchLabels?.['app'] ?? '',
      Number(b.spec?.minAvailable ?? 0),
    ]),
  );
  const samples: Sample[] = [];
  const sampling = { on: true };
  const loop = (async () => {
    while (sampling.on) {
      const s = await sample(lab, minimum).catch(() => undefined);
      if (s !== undefined) samples.push(s);
      await new Promise((r) => setTimeout(r, 1_000));
    }
  })();
  return {
    async stop() {
      sampling.on = false;
      await loop;
      const violations = samples.filter((s) =>
        Object.entries(minimum).some(([app, min]) => (s.healthy[app] ?? 0) < min),
      );
      return { samples, violations };
    },
  };
}

/**
 * `molt lab publish VERSION --vm FLAGS…`, then the operator's rollout of it for pool `vms`
 * followed to its end: the rollout as it ended (a halted one too: `--follow` exits non-zero
 * then, its last line still the rollout).
 */
export async function publishAndFollow(
  lab: NodeLab,
  version: string,
  flags: readonly string[] = [],
): Promise<RolloutView> {
  await lab.molt(['lab', 'publish', version, '--vm', ...flags, '--dir', lab.dir()]);
  return followRollout(lab, version, 'vms');
}

/** Wait for the operator's rollout of `version` in `pool`, then follow it to its end. */
export async function followRollout(
  lab: NodeLab,
  version: string,
  pool: string,
): Promise<RolloutView> {
  const t = performance.now();
  let id = '';
  for (let i = 0; id === '' && i < 600; i++) {
    const list = JSON.parse(
      await lab.molt(['rollout', 'list', '-o', 'json'], lab.env()),
    ) as RolloutSummaryView[];
    id = list.find((r) => r.target.version === version && r.pool === pool)?.id ?? '';
    if (id === '') await new Promise((r) => setTimeout(r, 2_000));
  }
  assert.notEqual(id, '', `the operator created a rollout of ${version} for pool ${pool}`);
  const out = await lab
    .molt(
      ['rollout', 'status', id, '--follow', '-o', 'json', '--reconnect-timeout', '900000'],
      lab.env(),
    )
    .catch((e: unknown) => {
      const stdout = (e as { stdout?: unknown }).stdout;
      if (typeof stdout === 'string' && stdout.trim() !== '') return stdout;
      throw e;
    });
  const final = JSON.parse(out.trim().split('\n').at(-1) ?? '{}') as RolloutView;
  console.log(
    `rollout of ${version} in pool ${pool}: ${final.state} after ${String(Math.round((performance.now() - t) / 1000))} s`,
  );
  return final;
}
