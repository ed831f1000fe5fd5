// SPDX-License-Identifier: Apache-2.0
/**
 * Cordon, drain and uncordon one node through the Kubernetes API (docs/adr/0006), for the agent
 * (its own node) and the P4 benchmark.
 *
 * - **Cordon** sets `spec.unschedulable` and, in the same patch, the annotation
 *   `molt.dev/cordoned-by: <operation>` — only when the node was schedulable. A node someone else
 *   cordoned keeps no molt annotation, so **uncordon** (which acts only on that annotation) never
 *   undoes another's cordon, even after the agent restarted mid-operation.
 * - **Drain** decides every pod with core's `decideDrain` (DaemonSet and mirror pods skipped,
 *   emptyDir and unmanaged pods refused unless the policy allows them), then evicts through the
 *   Eviction API, so PodDisruptionBudgets are honoured: a 429 (the budget allows no disruption
 *   now) is retried with backoff until the policy's timeout. Evicted pods are waited for until they
 *   are gone from the node (one field-selected list per poll, however many pods). At the timeout
 *   the policy's `onTimeout` applies: `abort-and-uncordon` (uncordon if molt cordoned, fail),
 *   `quarantine-and-skip` (stay cordoned, label the node `molt.dev/quarantined`, fail with
 *   `MOLT_DRAIN_QUARANTINED`, which the operator records as the machine skipped; **uncordon**
 *   leaves a quarantined node cordoned — the upgrade's undo must not release it, a person does by
 *   removing the label), or
 *   `force-delete` (delete what is left with no grace period — bypassing the budgets — and go on).
 * - **Uncordon** waits out an API server that does not answer (refused, reset, 5xx) for a while,
 *   as the drain does: it runs right after a boot, when the network or the API server may not be
 *   there yet, and a node left cordoned takes capacity from the cluster until a person notices.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import {
  CoreV1Api,
  PatchStrategy,
  setHeaderOptions,
  type KubeConfig,
  type V1Node,
  type V1Pod,
} from '@kubernetes/client-node';
import { decideDrain, podName, type DrainPolicy, type PodFacts } from '../../../core/drain/pods.ts';
import { ErrorCode, MoltError } from '../../../core/errors.ts';
import type { NodeReport } from '../../../core/kubernetes/node-ready.ts';
import type { ApiServerVersion } from '../../../core/kubernetes/kubelet-skew.ts';
import { apiServerVersion, kubeError, statusOf } from '../../../platform/kube/client.ts';
import { podFacts } from './pod-facts.ts';
import { outlasting } from './patience.ts';

export const CordonAnnotation = 'molt.dev/cordoned-by';
export const QuarantineLabel = 'molt.dev/quarantined';

const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

export interface DrainReport {
  readonly evicted: readonly string[];
  readonly skipped: readonly string[];
  /** Pods deleted without their budget's consent (`force-delete` at the timeout). */
  readonly forced: readonly string[];
}

export interface NodeDrainer {
  /** Cordon the node for `operationId`; false when it was already cordoned (by anyone). */
  cordon(operationId: string): Promise<boolean>;
  drain(operationId: string, policy: DrainPolicy): Promise<DrainReport>;
  /** Uncordon only a cordon molt set; otherwise say why the node was left as it is. */
  uncordon(): Promise<UncordonOutcome>;
  /** The node's Ready condition, its `molt.dev/version` label and the boot its kubelet reported. */
  readiness(): Promise<NodeReport>;
  /**
   * The API server's version (the pull's kubelet skew check), waiting out an API server that does
   * not answer as the cordon does: on a single control plane it is busy with this very upgrade.
   */
  apiServer(): Promise<ApiServerVersion>;
}

/**
 * What an uncordon did, or why it left the node alone: already `schedulable` (a failed drain's
 * `abort-and-uncordon` got there first), cordoned by another, or quarantined by a drain.
 */
export type UncordonOutcome = 'uncordoned' | 'schedulable' | 'cordoned-by-another' | 'quarantined';

export interface NodeDrainerOptions {
  readonly kc: KubeConfig;
  readonly node: string;
  /** Progress lines ("evicting 12 pods", "apps/web: budget allows no disruption, retrying"). */
  readonly log?: (line: string) => void;
  /** How often evicted pods are looked for, and the first 429 backoff. @default 500 */
  readonly pollMs?: number;
  /** How long an uncordon waits out an API server that does not answer. @default 120000 */
  readonly uncordonPatienceMs?: number;
  /**
   * How long a cordon, and the version read before it, wait out an API server that does not
   * answer. @default 120000
   */
  readonly cordonPatienceMs?: number;
}

export function createNodeDrainer(o: NodeDrainerOptions): NodeDrainer {
  const core = o.kc.makeApiClient(CoreV1Api);
  const log = o.log ?? (() => undefined);
  const pollMs = o.pollMs ?? 500;
  const call = async <T>(what: string, f: () => Promise<T>): Promise<T> => {
    try {
      return await f();
    } catch (e) {
      if (statusOf(e) === 404 && what.startsWith('read node'))
        throw new MoltError(ErrorCode.KubeNodeNotFound, `node ${o.node} does not exist`, {
          cause: e,
          hint: 'check kubernetes.node in the agent config (default: the machine name)',
        });
      throw kubeError(e, what);
    }
  };
  const readNode = (): Promise<V1Node> =>
    call(`read node ${o.node}`, () => core.readNode({ name: o.node }));
  const patchNode = (body: object): Promise<V1Node> =>
    call(`patch node ${o.node}`, () => core.patchNode({ name: o.node, body }, merge));
  const podsOnNode = async (): Promise<V1Pod[]> =>
    (
      await call(`list the pods of node ${o.node}`, () =>
        core.listPodForAllNamespaces({ fieldSelector: `spec.nodeName=${o.node}` }),
      )
    ).items;

  const uncordon = async (): Promise<UncordonOutcome> => {
    const node = await readNode();
    if (node.metadata?.annotations?.[CordonAnnotation] === undefined)
      return node.spec?.unschedulable === true ? 'cordoned-by-another' : 'schedulable';
    // Quarantined by a drain's `quarantine-and-skip`: the upgrade's undo must not release the node;
    // a person does, by removing the label (and uncordoning).
    const quarantine = node.metadata.labels?.[QuarantineLabel];
    if (quarantine !== undefined) {
      log(`${o.node} stays cordoned: quarantined (${QuarantineLabel}=${quarantine})`);
      return 'quarantined';
    }
    await patchNode({
      spec: { unschedulable: null },
      metadata: { annotations: { [CordonAnnotation]: null } },
    });
    log(`uncordoned ${o.node}`);
    return 'uncordoned';
  };

  const patiently = <T>(deadline: number, f: () => Promise<T>): Promise<T> =>
    outlasting(deadline, f, { pollMs, log });

  /** Evict `pod` until accepted, gone, or the deadline; 'timeout' when the budget kept refusing. */
  const evict = async (pod: PodFacts, deadline: number): Promise<'evicted' | 'timeout'> => {
    for (let wait = pollMs; ; wait = Math.min(wait * 2, 5_000)) {
      try {
        await core.createNamespacedPodEviction({
          name: pod.name,
          namespace: pod.namespace,
          body: {
            apiVersion: 'policy/v1',
            kind: 'Eviction',
            metadata: { name: pod.name, namespace: pod.namespace },
          },
        });
        return 'evicted';
      } catch (e) {
        const status = statusOf(e);
        if (status === 404) return 'evicted';
        const error = kubeError(e, `evict ${podName(pod)}`);
        if (status !== 429 && !error.retryable) throw error;
        if (status !== 429 && Date.now() + wait > deadline) throw error;
      }
      if (Date.now() + wait > deadline) return 'timeout';
      log(`${podName(pod)}: not evicted yet (budget or API server); retrying`);
      await sleep(wait);
    }
  };

  /** Wait until none of `uids` is on the node any more, or the deadline; the uids still there. */
  const untilGone = async (uids: Set<string>, deadline: number): Promise<Set<string>> => {
    for (;;) {
      const left = new Set(
        (await patiently(deadline, podsOnNode))
          .map((p) => p.metadata?.uid ?? '')
          .filter((u) => uids.has(u)),
      );
      if (left.size === 0 || Date.now() >= deadline) return left;
      await sleep(pollMs);
    }
  };

  const forceDelete = async (pods: readonly PodFacts[]): Promise<void> => {
    await Promise.all(
      pods.map((p) =>
        core
          .deleteNamespacedPod({
            name: p.name,
            namespace: p.namespace,
            gracePeriodSeconds: 0,
            body: { gracePeriodSeconds: 0, preconditions: { uid: p.uid } },
          })
          .catch((e: unknown) => {
            if (statusOf(e) !== 404 && statusOf(e) !== 409)
              throw kubeError(e, `delete ${podName(p)}`);
          }),
      ),
    );
  };

  const onTimeout = async (
    operationId: string,
    policy: DrainPolicy,
    left: readonly PodFacts[],
  ): Promise<void> => {
    const names = left.map(podName).join(', ');
    if (policy.onTimeout === 'force-delete') {
      log(`drain timeout: deleting ${names} without their budgets' consent (force-delete)`);
      await forceDelete(left);
      return;
    }
    const quarantine = policy.onTimeout === 'quarantine-and-skip';
    if (quarantine) await patchNode({ metadata: { labels: { [QuarantineLabel]: operationId } } });
    else await uncordon();
    throw new MoltError(
      quarantine ? ErrorCode.DrainQuarantined : ErrorCode.DrainTimeout,
      `node ${o.node} still runs ${names} after ${String(Math.round(policy.timeoutMs / 1000))} s` +
        (quarantine
          ? '; the node stays cordoned and is labelled molt.dev/quarantined'
          : '; the node was uncordoned'),
      {
        hint: 'a PodDisruptionBudget allows no disruption, or pods do not terminate; see `kubectl get pdb -A`',
        details: { pods: left.map(podName), onTimeout: policy.onTimeout },
      },
    );
  };

  const cordon = async (operationId: string): Promise<boolean> => {
    const node = await readNode();
    const by = node.metadata?.annotations?.[CordonAnnotation];
    // An earlier attempt whose answer was lost (a timeout on a busy API server) did cordon it.
    if (node.spec?.unschedulable === true && by === operationId) return true;
    if (node.spec?.unschedulable === true) {
      log(
        `${o.node} is already cordoned${by === undefined ? ' (not by molt: it stays cordoned)' : ''}`,
      );
      return false;
    }
    await patchNode({
      spec: { unschedulable: true },
      metadata: { annotations: { [CordonAnnotation]: operationId } },
    });
    log(`cordoned ${o.node}`);
    return true;
  };

  return {
    // Waits an API server out as the drain and the uncordon do: a single control plane that is
    // slow to answer (its own machine busy pulling the release) must not fail the upgrade.
    cordon: (operationId) =>
      patiently(Date.now() + (o.cordonPatienceMs ?? 120_000), () => cordon(operationId)),
    async drain(operationId, policy) {
      const deadline = Date.now() + policy.timeoutMs;
      const decision = decideDrain((await patiently(deadline, podsOnNode)).map(podFacts), policy);
      if (decision.refuse.length > 0)
        throw new MoltError(
          ErrorCode.DrainRefused,
          `node ${o.node} runs pods the drain policy may not evict: ${decision.refuse
            .map((r) => `${podName(r.pod)} (${r.reason})`)
            .join('; ')}`,
          { details: { pods: decision.refuse.map((r) => podName(r.pod)) } },
        );
      log(`evicting ${String(decision.evict.length)} pods from ${o.node}`);
      const outcomes = await Promise.all(decision.evict.map((p) => evict(p, deadline)));
      const accepted = decision.evict.filter((_, i) => outcomes[i] === 'evicted');
      const left = await untilGone(new Set(accepted.map((p) => p.uid)), deadline);
      const stuck = decision.evict.filter((p, i) => outcomes[i] === 'timeout' || left.has(p.uid));
      if (stuck.length > 0) await onTimeout(operationId, policy, stuck);
      return {
        evicted: accepted.filter((p) => !left.has(p.uid)).map(podName),
        skipped: decision.skip.map((s) => podName(s.pod)),
        forced: stuck.map(podName),
      };
    },
    // Right after a boot (a fallback's undo runs then) the API server may not answer yet: a node
    // molt cordoned must not stay cordoned for want of a retry.
    uncordon: () => patiently(Date.now() + (o.uncordonPatienceMs ?? 120_000), uncordon),
    apiServer: () =>
      patiently(Date.now() + (o.cordonPatienceMs ?? 120_000), () => apiServerVersion(o.kc)),
    async readiness() {
      const node = await readNode();
      const ready = node.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True';
      return {
        ready,
        version: node.metadata?.labels?.['molt.dev/version'],
        bootId: node.status?.nodeInfo?.bootID,
        kubeletVersion: node.status?.nodeInfo?.kubeletVersion,
      };
    },
  };
}
