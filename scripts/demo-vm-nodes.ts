// SPDX-License-Identifier: Apache-2.0
// The VM demo's Kubernetes half (demo-vm.ts, docs/adr/0015): the VMs as real nodes — containerd 2,
// the release's kubelet — the lab's pods running as containers on them, and a watch, a look a
// second, of what Kubernetes saw while the operator upgraded them, told afterwards as a timeline
// (the rollout's progress line redraws in place on a terminal, so nothing else may print then).
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { CoreV1Api, PolicyV1Api, type V1Node, type V1Pod } from '@kubernetes/client-node';
import type { LabState } from '../src/lab/state.ts';
import { loadKubeConfig } from '../src/platform/kube/client.ts';
import { kubectl } from './demo-progress.ts';
import { check, dim, elapsed } from './demo-terminal.ts';

const versions = new Map(
  [
    ...(await readFile(join(import.meta.dirname, 'kube-versions.env'), 'utf8')).matchAll(
      /^(\w+)=(\S+)$/gm,
    ),
  ].map((m): [string, string] => [m[1] ?? '', m[2] ?? '']),
);
/** Release 1.0.0's kubelet (the previous minor), later releases' (the current), and containerd. */
export const Kubelet = {
  before: versions.get('KUBERNETES_PREVIOUS') ?? '?',
  after: versions.get('KUBERNETES') ?? '?',
};
const Containerd = `containerd://${(versions.get('CONTAINERD') ?? '?').replace(/^v/, '')}`;

const isReady = (conditions: { type: string; status: string }[] | undefined): boolean =>
  (conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
const podReady = (p: V1Pod): boolean =>
  p.metadata?.deletionTimestamp == null && isReady(p.status?.conditions);

const indent = (text: string): string => dim(text.trimEnd().replace(/^/gm, '    '));

async function clients(lab: LabState) {
  if (lab.kubeconfig === undefined) throw new Error('the lab runs no Kubernetes');
  const kc = await loadKubeConfig(lab.kubeconfig);
  return { core: kc.makeApiClient(CoreV1Api), policy: kc.makeApiClient(PolicyV1Api) };
}

/** A VM's Node as the story says it: Ready, containerd 2, the release's kubelet. */
function nodeAsExpected(n: V1Node | undefined, kubelet: string): boolean {
  const info = n?.status?.nodeInfo;
  return (
    isReady(n?.status?.conditions) &&
    info?.containerRuntimeVersion === Containerd &&
    info.kubeletVersion === kubelet
  );
}

/** `kubectl get nodes -o wide`, and each VM's Node checked: Ready, containerd 2, `kubelet`. */
export async function showNodes(
  lab: LabState,
  vms: readonly string[],
  kubelet: string,
): Promise<void> {
  console.log(indent(await kubectl(lab, 'get', 'nodes', '-o', 'wide')));
  const { core } = await clients(lab);
  const nodes = (await core.listNode()).items;
  for (const name of vms) {
    const n = nodes.find((x) => x.metadata?.name === name);
    const info = n?.status?.nodeInfo;
    check(
      nodeAsExpected(n, kubelet),
      `Node ${name}: Ready, ${info?.containerRuntimeVersion ?? '?'}, kubelet ${info?.kubeletVersion ?? '?'}`,
    );
  }
}

/** `kubectl get pods -n shop -o wide`, each checked: Ready, on a VM, a containerd container. */
export async function showPods(lab: LabState, vms: readonly string[]): Promise<void> {
  console.log(indent(await kubectl(lab, 'get', 'pods', '-n', 'shop', '-o', 'wide')));
  const { core } = await clients(lab);
  const pods = (await core.listNamespacedPod({ namespace: 'shop' })).items;
  const inContainers = pods.filter(
    (p) =>
      podReady(p) &&
      vms.includes(p.spec?.nodeName ?? '') &&
      /^containerd:\/\/[0-9a-f]{64}$/.test(p.status?.containerStatuses?.[0]?.containerID ?? ''),
  );
  const where = vms.map(
    (vm) => `${vm} ${String(pods.filter((p) => p.spec?.nodeName === vm).length)}`,
  );
  check(
    pods.length === 9 && inContainers.length === 9,
    `shop/web (6) and shop/db (3): ${String(inContainers.length)} of ${String(pods.length)} pods Ready in containerd containers on the VMs (${where.join(', ')})`,
  );
}

export interface Look {
  readonly at: string;
  /** Per VM: its Node's state as a phrase (Ready/NotReady, cordoned, kubelet). */
  readonly nodes: Record<string, { ready: boolean; cordoned: boolean; kubelet: string }>;
  /** Per VM, the workload pods on it; per app, its Ready pods. */
  readonly podsOn: Record<string, number>;
  readonly ready: Record<string, number>;
}

async function look(core: CoreV1Api, vms: readonly string[]): Promise<Look> {
  const [nodes, pods] = await Promise.all([
    core.listNode(),
    core.listNamespacedPod({ namespace: 'shop' }),
  ]);
  const node = (n: V1Node | undefined) => ({
    ready: isReady(n?.status?.conditions),
    cordoned: n?.spec?.unschedulable === true,
    kubelet: n?.status?.nodeInfo?.kubeletVersion ?? '?',
  });
  const count = (f: (p: V1Pod) => boolean): number => pods.items.filter(f).length;
  return {
    at: elapsed(),
    nodes: Object.fromEntries(
      vms.map((vm) => [vm, node(nodes.items.find((n) => n.metadata?.name === vm))]),
    ),
    podsOn: Object.fromEntries(vms.map((vm) => [vm, count((p) => p.spec?.nodeName === vm)])),
    ready: Object.fromEntries(
      ['web', 'db'].map((app) => [
        app,
        count((p) => p.metadata?.labels?.['app'] === app && podReady(p)),
      ]),
    ),
  };
}

const nodeLine = (vm: string, n: Look['nodes'][string]): string =>
  `${vm} ${n.ready ? 'Ready' : 'NotReady'}${n.cordoned ? ', cordoned' : ''}, kubelet ${n.kubelet}`;
const podsLine = (l: Look): string =>
  `pods: ${Object.entries(l.podsOn)
    .map(([vm, n]) => `${String(n)} on ${vm}`)
    .join(', ')}; Ready: web ${String(l.ready['web'])}/6, db ${String(l.ready['db'])}/3`;

export interface NodeWatch {
  /** Until the latest look satisfies `ok` (at most `ms`). */
  until(ok: (l: Look) => boolean, ms: number): Promise<void>;
  /** Stop looking; every look, and each app's budget (minAvailable). */
  stop(): Promise<{ looks: readonly Look[]; minimum: Record<string, number> }>;
}

/** Look every second until `stop()`; then the looks. */
export async function watchNodes(lab: LabState, vms: readonly string[]): Promise<NodeWatch> {
  const { core, policy } = await clients(lab);
  const budgets = (await policy.listNamespacedPodDisruptionBudget({ namespace: 'shop' })).items;
  const minimum = Object.fromEntries(
    budgets.map((b) => [
      b.spec?.selector?.matchLabels?.['app'] ?? '',
      Number(b.spec?.minAvailable),
    ]),
  );
  const looks: Look[] = [];
  const state = { on: true };
  const loop = (async () => {
    while (state.on) {
      const l = await look(core, vms).catch(() => undefined);
      if (l !== undefined) looks.push(l);
      await sleep(1_000);
    }
  })();
  return {
    async until(ok, ms) {
      const deadline = performance.now() + ms;
      while (performance.now() < deadline) {
        const l = looks.at(-1);
        if (l !== undefined && ok(l)) return;
        await sleep(1_000);
      }
    },
    async stop() {
      state.on = false;
      await loop;
      return { looks, minimum };
    },
  };
}

/** The looks as a timeline: a line whenever a Node or the pods' placement changed. */
export function showTimeline(looks: readonly Look[]): void {
  console.log(dim('    What Kubernetes saw (a look a second; a line for each change):'));
  let prev: Look | undefined;
  for (const l of looks) {
    for (const [vm, n] of Object.entries(l.nodes))
      if (prev === undefined || nodeLine(vm, prev.nodes[vm] ?? n) !== nodeLine(vm, n))
        console.log(`    ${l.at} ${nodeLine(vm, n)}`);
    if (prev === undefined || podsLine(prev) !== podsLine(l))
      console.log(`    ${l.at} ${podsLine(l)}`);
    prev = l;
  }
}

/** What the looks must show of one node: cordoned and drained, NotReady, back Ready and uncordoned. */
function checkNodeSeen(looks: readonly Look[], vm: string, kubelet: string): void {
  const states = looks.map((l) => l.nodes[vm]).filter((n) => n !== undefined);
  const drained = looks.some((l) => l.nodes[vm]?.cordoned === true && l.podsOn[vm] === 0);
  check(
    states.some((n) => n.cordoned) && drained,
    `${vm} was cordoned and drained: its pods moved to the other VM`,
  );
  check(
    states.some((n) => !n.ready),
    `${vm} went NotReady through its real reboot`,
  );
  const last = states.at(-1);
  check(
    last?.ready === true && !last.cordoned && last.kubelet === kubelet,
    `${vm} is Ready again, uncordoned, kubelet ${last?.kubelet ?? '?'}`,
  );
}

/**
 * What the looks must show of `vms` upgraded (or fallen back) under the budgets: each node as
 * {@link checkNodeSeen}, no look below a budget's minAvailable, every pod Ready at the end.
 */
export function checkNodesSeen(
  seen: { looks: readonly Look[]; minimum: Record<string, number> },
  vms: readonly string[],
  kubelet: string,
): void {
  const { looks, minimum } = seen;
  for (const vm of vms) checkNodeSeen(looks, vm, kubelet);
  for (const [app, min] of Object.entries(minimum)) {
    const lowest = Math.min(...looks.map((l) => l.ready[app] ?? 0));
    check(
      looks.length > 0 && lowest >= min,
      `PodDisruptionBudget of ${app} respected: never fewer than ${String(min)} Ready (lowest ${String(lowest)} in ${String(looks.length)} looks)`,
    );
  }
  const end = looks.at(-1);
  check(
    end?.ready['web'] === 6 && end.ready['db'] === 3,
    `every pod Ready at the end (web ${String(end?.ready['web'])}/6, db ${String(end?.ready['db'])}/3)`,
  );
}
