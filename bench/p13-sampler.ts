// SPDX-License-Identifier: Apache-2.0
/**
 * P13's eyes on the cluster: one look a second at the workloads' pods and the VMs' Nodes, and what
 * a window of those looks says about one upgraded node — budget violations, how long its evicted
 * pods took to be Ready elsewhere, how long its Node was NotReady. A look is two list calls, so
 * a second's sampling costs the API server nothing the upgrade would notice.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { CoreV1Api, V1Node, V1Pod } from '@kubernetes/client-node';

/** One workload pod as a look saw it. */
export interface PodLook {
  readonly app: string;
  readonly node: string;
  readonly ready: boolean;
  /**
   * When its deletion was asked (ms): the eviction's moment, from the API server's
   * `deletionTimestamp` less the grace period it carries (whole seconds).
   */
  readonly deletingSince?: number;
}

export interface Look {
  readonly at: number;
  readonly pods: readonly PodLook[];
  readonly nodes: Readonly<Record<string, { ready: boolean; kubelet: string }>>;
}

const nodeReady = (n: V1Node): boolean =>
  (n.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');

function podLook(p: V1Pod): PodLook {
  const deleting = p.metadata?.deletionTimestamp;
  const ready =
    deleting == null &&
    (p.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
  return {
    app: p.metadata?.labels?.['app'] ?? '',
    node: p.spec?.nodeName ?? '',
    ready,
    ...(deleting != null && {
      deletingSince:
        new Date(deleting).getTime() - (p.metadata?.deletionGracePeriodSeconds ?? 0) * 1000,
    }),
  };
}

export interface Sampler {
  /** Every look so far, oldest first. */
  readonly looks: readonly Look[];
  /** The looks from `from` (ms) on, before `to`. */
  window(from: number, to?: number): Look[];
  stop(): Promise<void>;
}

/** Looks every second at `namespace`'s pods and every Node until `stop()`. */
export function startSampler(core: CoreV1Api, namespace: string): Sampler {
  const looks: Look[] = [];
  const state = { on: true };
  const loop = (async () => {
    while (state.on) {
      const at = Date.now();
      const look = await Promise.all([core.listNamespacedPod({ namespace }), core.listNode()])
        .then(([pods, nodes]) => ({
          at,
          pods: pods.items.map(podLook),
          nodes: Object.fromEntries(
            nodes.items.map((n) => [
              n.metadata?.name ?? '',
              { ready: nodeReady(n), kubelet: n.status?.nodeInfo?.kubeletVersion ?? '' },
            ]),
          ),
        }))
        // An API call lost to the machine's load is a gap in the looks, not the end of the run.
        .catch(() => undefined);
      if (look !== undefined) looks.push(look);
      await sleep(Math.max(0, 1_000 - (Date.now() - at)));
    }
  })();
  return {
    looks,
    window: (from, to = Number.POSITIVE_INFINITY) => looks.filter((l) => l.at >= from && l.at < to),
    async stop(): Promise<void> {
      state.on = false;
      await loop;
    },
  };
}

/** Ready pods per app in one look. */
export function readyPerApp(look: Look, apps: readonly string[], off?: string): number[] {
  return apps.map(
    (app) => look.pods.filter((p) => p.app === app && p.ready && p.node !== off).length,
  );
}

/** Looks with fewer Ready pods of an app than its budget's minAvailable. */
export function violations(
  looks: readonly Look[],
  minimum: Readonly<Record<string, number>>,
): Look[] {
  const apps = Object.keys(minimum);
  return looks.filter((l) =>
    readyPerApp(l, apps).some((n, i) => n < (minimum[apps[i] ?? ''] ?? 0)),
  );
}

/**
 * From the first eviction of a pod on `node` to the first look with none of the workloads' pods
 * left on it and every app back to its count before the window (`full`) on the other nodes, in
 * seconds; NaN when either never happened in `looks`.
 */
export function evictedReadySeconds(
  looks: readonly Look[],
  node: string,
  full: Readonly<Record<string, number>>,
): number {
  const apps = Object.keys(full);
  const evictions = looks.flatMap((l) =>
    l.pods.filter((p) => p.node === node && p.deletingSince !== undefined),
  );
  if (evictions.length === 0) return Number.NaN;
  const first = Math.min(...evictions.map((p) => p.deletingSince ?? Number.NaN));
  const settled = looks.find(
    (l) =>
      l.at >= first &&
      !l.pods.some((p) => p.node === node) &&
      readyPerApp(l, apps, node).every((n, i) => n >= (full[apps[i] ?? ''] ?? 0)),
  );
  return settled === undefined ? Number.NaN : (settled.at - first) / 1000;
}

/**
 * From the first look with `node`'s Node NotReady to the first look after it with the Node Ready
 * again, in seconds (0 when it never went NotReady; NaN when it did not come back in `looks`).
 */
export function notReadySeconds(looks: readonly Look[], node: string): number {
  const down = looks.findIndex((l) => l.nodes[node]?.ready === false);
  if (down < 0) return 0;
  const back = looks.slice(down).find((l) => l.nodes[node]?.ready === true);
  const start = looks[down]?.at ?? Number.NaN;
  return back === undefined ? Number.NaN : (back.at - start) / 1000;
}
