// SPDX-License-Identifier: Apache-2.0
/**
 * The declared molt.dev objects as a {@link DeclaredSource} (docs/adr/0011): `Pool`s and
 * `MachineHold`s a person applies, and the action fields of the `Rollout`s the status mirror
 * writes. Each kind (and the labelled Nodes) is watched (`watched.ts`): a pass reads them from
 * memory, and a change wakes the loop. Reading puts the operator's finalizer on every pool, so a pool deleted mid-rollout stays
 * until nothing of it is in flight; reporting writes each object's `Accepted` condition (and the
 * conditions a verdict adds, an ImagePolicy's `GMImageMissing`) and `observedGeneration` through the
 * status subresource, only when they changed.
 */
import {
  CoreV1Api,
  CustomObjectsApi,
  PatchStrategy,
  setHeaderOptions,
  type KubeConfig,
  type KubernetesListObject,
  type KubernetesObject,
  type V1Node,
} from '@kubernetes/client-node';
import { createHash } from 'node:crypto';
import { kubeError, statusOf } from '../../../platform/kube/client.ts';
import { MoltGroup, MoltVersion, PoolFinalizer } from '../../../protocol/kube-resources.ts';
import type { DeclaredSource, DeclaredState, DeclaredVerdict } from '../../ports/declared.ts';
import { kubeName, stampTransitions, type Condition } from '../kube-status/view.ts';
import { nodeMachine, type NodeInventoryOptions } from './nodes.ts';
import { watchedList } from './watched.ts';
import { PoolLabel, UntrustedPoolLabel } from '../../../protocol/kube-resources.ts';
import {
  declaredHold,
  declaredImagePolicy,
  declaredKubernetesCluster,
  declaredPool,
  needsFinalizer,
  rolloutRequest,
  type ListedObject,
} from './read.ts';

const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const plurals = {
  Pool: 'pools',
  MachineHold: 'machineholds',
  Rollout: 'rollouts',
  KubernetesCluster: 'kubernetesclusters',
  ImagePolicy: 'imagepolicies',
} as const;

export interface KubeDeclaredOptions {
  readonly kc: KubeConfig;
  readonly namespace: string;
  readonly now: () => number;
  /** Take machines from Nodes labelled `node-restriction.kubernetes.io/molt-pool` (needs list on nodes). */
  readonly nodes?: NodeInventoryOptions | undefined;
}

export function createKubeDeclared(o: KubeDeclaredOptions): DeclaredSource {
  const custom = o.kc.makeApiClient(CustomObjectsApi);
  const core = o.kc.makeApiClient(CoreV1Api);
  const { namespace } = o;
  const where = (kind: keyof typeof plurals) => ({
    group: MoltGroup,
    version: MoltVersion,
    namespace,
    plural: plurals[kind],
  });
  /** Each object's status as last read or written (`kind/name`), to write only what changed. */
  const statuses = new Map<string, { conditions: readonly Condition[]; compared: string }>();
  const pools = new Map<string, ListedObject>();

  let listener: () => void = () => undefined;
  const onChange = (): void => {
    listener();
  };
  const watch = (kind: keyof typeof plurals) =>
    watchedList<ListedObject & KubernetesObject>({
      kc: o.kc,
      path: `/apis/${MoltGroup}/${MoltVersion}/namespaces/${namespace}/${plurals[kind]}`,
      list: () =>
        custom.listNamespacedCustomObject(where(kind)) as Promise<
          KubernetesListObject<ListedObject & KubernetesObject>
        >,
      what: `${plurals[kind]}.${MoltGroup} in ${namespace}`,
      onChange,
    });
  const watched = {
    Pool: watch('Pool'),
    MachineHold: watch('MachineHold'),
    Rollout: watch('Rollout'),
    KubernetesCluster: watch('KubernetesCluster'),
    ImagePolicy: watch('ImagePolicy'),
  };

  const list = async (kind: keyof typeof plurals): Promise<readonly ListedObject[]> => {
    const items = await watched[kind].items();
    for (const item of items) {
      const key = `${kind}/${item.metadata?.name ?? ''}`;
      if (statuses.has(key)) continue;
      const conditions = (item.status?.conditions ?? []) as Condition[];
      statuses.set(key, { conditions, compared: '' });
    }
    return items;
  };

  const finalize = async (item: ListedObject, finalizers: readonly string[]): Promise<void> => {
    const name = item.metadata?.name ?? '';
    await custom
      .patchNamespacedCustomObject(
        {
          ...where('Pool'),
          name,
          // The resourceVersion makes it a compare-and-set: a finalizer list changed meanwhile
          // (another controller's) is not overwritten; the next pass tries again.
          body: { metadata: { finalizers, resourceVersion: item.metadata?.resourceVersion } },
        },
        merge,
      )
      .catch((e: unknown) => {
        if (statusOf(e) !== 404 && statusOf(e) !== 409)
          throw kubeError(e, `update the finalizers of Pool ${namespace}/${name}`);
      });
  };

  // Nodes with only the old pool label are watched too, to say why they are no machines.
  const watchNodes = (labelSelector: string) =>
    watchedList<V1Node>({
      kc: o.kc,
      path: '/api/v1/nodes',
      list: () => core.listNode({ labelSelector }),
      labelSelector,
      what: `the Nodes labelled ${labelSelector}`,
      onChange,
    });
  const nodes =
    o.nodes === undefined
      ? undefined
      : [watchNodes(PoolLabel), watchNodes(`${UntrustedPoolLabel},!${PoolLabel}`)];
  const nodeMachines = async (n: NodeInventoryOptions) =>
    (await Promise.all((nodes ?? []).map((w) => w.items())))
      .flat()
      .map((node) => nodeMachine(node, n));

  return {
    async read(): Promise<DeclaredState> {
      const [poolItems, holdItems, rolloutItems, clusterItems, imageItems] = await Promise.all([
        list('Pool'),
        list('MachineHold'),
        list('Rollout'),
        list('KubernetesCluster'),
        list('ImagePolicy'),
      ]);
      pools.clear();
      for (const item of poolItems) {
        pools.set(item.metadata?.name ?? '', item);
        if (needsFinalizer(item))
          await finalize(item, [...(item.metadata?.finalizers ?? []), PoolFinalizer]);
      }
      return {
        ...(o.nodes !== undefined && { machines: await nodeMachines(o.nodes) }),
        pools: poolItems.map(declaredPool),
        holds: holdItems.map(declaredHold),
        requests: rolloutItems.flatMap((r) => rolloutRequest(r) ?? []),
        clusters: clusterItems.map(declaredKubernetesCluster),
        images: imageItems.map(declaredImagePolicy),
      };
    },

    async report(verdicts: readonly DeclaredVerdict[]): Promise<void> {
      const now = new Date(o.now()).toISOString();
      for (const v of verdicts) {
        const key = `${v.kind}/${v.name}`;
        const condition: Condition = {
          type: 'Accepted',
          status: v.accepted ? 'True' : 'False',
          reason: v.reason,
          message: v.message,
        };
        const body = { observedGeneration: v.generation, ...v.status };
        const next = [condition, ...(v.conditions ?? [])];
        const compared = JSON.stringify({ next, body });
        const before = statuses.get(key);
        if (before?.compared === compared) continue;
        const conditions = stampTransitions(next, before?.conditions ?? [], now).map((c) => ({
          ...c,
          observedGeneration: v.generation,
        }));
        await custom
          .patchNamespacedCustomObjectStatus(
            { ...where(v.kind), name: v.name, body: { status: { ...body, conditions } } },
            merge,
          )
          .catch((e: unknown) => {
            if (statusOf(e) !== 404)
              throw kubeError(e, `update the status of ${v.kind} ${namespace}/${v.name}`);
          });
        statuses.set(key, { conditions, compared });
      }
    },

    async release(pool: string): Promise<void> {
      const item = pools.get(pool);
      if (item === undefined) return;
      await finalize(
        item,
        (item.metadata?.finalizers ?? []).filter((f) => f !== PoolFinalizer),
      );
      statuses.delete(`Pool/${pool}`);
    },

    objectName: kubeName,

    onChange(next) {
      listener = next;
    },

    async close() {
      await Promise.all([...Object.values(watched), ...(nodes ?? [])].map((w) => w.stop()));
    },

    async warn(rollout: string, reason: string, message: string): Promise<void> {
      const name = kubeName(rollout);
      const id = createHash('sha256').update(`${rollout}\n${reason}\n${message}`).digest('hex');
      const at = new Date(o.now());
      await core
        .createNamespacedEvent({
          namespace,
          body: {
            metadata: { name: `${name}.${id.slice(0, 16)}`, namespace },
            type: 'Warning',
            reason,
            message,
            involvedObject: {
              apiVersion: `${MoltGroup}/${MoltVersion}`,
              kind: 'Rollout',
              name,
              namespace,
            },
            source: { component: 'molt-operator' },
            reportingComponent: 'molt.dev/operator',
            reportingInstance: 'molt-operator',
            firstTimestamp: at,
            lastTimestamp: at,
            count: 1,
          },
        })
        .catch((e: unknown) => {
          if (statusOf(e) !== 409) throw kubeError(e, `create Event ${namespace}/${name}`);
        });
    },
  };
}
