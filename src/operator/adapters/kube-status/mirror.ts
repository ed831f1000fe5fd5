// SPDX-License-Identifier: Apache-2.0
/**
 * Writes the operator's state into molt.dev custom resources and Events (docs/adr/0006 §9). The
 * store stays the source of truth; this is a one-way mirror the leader refreshes after each pass:
 *
 * - Objects are created when new, their spec and status merge-patched only when they changed
 *   (compared with what this process last wrote, first filled from a list, so a restart rewrites
 *   nothing and keeps each condition's `lastTransitionTime`), and deleted when the state no longer
 *   has them (a machine removed from the fleet, a channel no pool follows).
 * - History entries since the last sync become Events; a conflict means the Event exists.
 * - Failures are reported and retried at the next sync: a cluster that is away never stops a
 *   rollout (the mirror is for people, the operator does not read it back).
 */
import {
  CoreV1Api,
  CustomObjectsApi,
  PatchStrategy,
  setHeaderOptions,
  type KubeConfig,
} from '@kubernetes/client-node';
import { kubeError, statusOf } from '../../../platform/kube/client.ts';
import type { HistoryEvent } from '../../ports/store.ts';
import { eventFor, type EventSpec } from './events.ts';
import {
  mirrorObjects,
  stampTransitions,
  type Condition,
  type MirrorKind,
  type MirrorObject,
  type ViewInput,
} from './view.ts';

export const group = 'molt.dev';
export const version = 'v1alpha1';
const plurals: Record<MirrorKind, string> = {
  Rollout: 'rollouts',
  Channel: 'channels',
  NodeUpgrade: 'nodeupgrades',
};
const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const managedBy = { 'app.kubernetes.io/managed-by': 'molt-operator' };
/** Events older than this are not written at start-up (the API server keeps Events for 1 h). */
const eventHorizonMs = 60 * 60_000;

interface Written {
  readonly uid: string;
  spec: string;
  status: string;
  conditions: readonly Condition[];
}

/** History entries after `afterSeq` (all when undefined), oldest first. */
export type HistoryReader = (afterSeq: number | undefined) => Promise<readonly HistoryEvent[]>;

export interface KubeStatusMirror {
  sync(input: ViewInput, history: HistoryReader, now: number): Promise<void>;
}

export interface KubeStatusMirrorOptions {
  readonly kc: KubeConfig;
  readonly namespace: string;
}

interface Listed {
  items?: {
    metadata?: { name?: string; uid?: string };
    spec?: unknown;
    status?: { conditions?: Condition[] } & Record<string, unknown>;
  }[];
}

const key = (kind: MirrorKind, name: string): string => `${kind}/${name}`;
/** The status as compared between syncs: condition times are stamped, not compared. */
const withoutTimes = (status: MirrorObject['status']): string =>
  JSON.stringify({
    ...status,
    conditions: status.conditions.map((c) => ({ ...c, lastTransitionTime: undefined })),
  });

export function createKubeStatusMirror(o: KubeStatusMirrorOptions): KubeStatusMirror {
  const custom = o.kc.makeApiClient(CustomObjectsApi);
  const core = o.kc.makeApiClient(CoreV1Api);
  const { namespace } = o;
  const written = new Map<string, Written>();
  let loaded = false;
  let lastSeq: number | undefined;
  const where = (kind: MirrorKind) => ({ group, version, namespace, plural: plurals[kind] });

  const load = async (): Promise<void> => {
    for (const kind of Object.keys(plurals) as MirrorKind[]) {
      const list = (await custom.listNamespacedCustomObject(where(kind)).catch((e: unknown) => {
        throw kubeError(e, `list ${plurals[kind]}.${group} in ${namespace}`);
      })) as Listed;
      for (const item of list.items ?? []) {
        const name = item.metadata?.name ?? '';
        const status = { conditions: [], ...item.status } as MirrorObject['status'];
        written.set(key(kind, name), {
          uid: item.metadata?.uid ?? '',
          spec: JSON.stringify(item.spec ?? {}),
          status: withoutTimes(status),
          conditions: status.conditions,
        });
      }
    }
    loaded = true;
  };

  const create = async (obj: MirrorObject): Promise<Written> => {
    const body = {
      apiVersion: `${group}/${version}`,
      kind: obj.kind,
      metadata: { name: obj.name, namespace, labels: managedBy },
      spec: obj.spec,
    };
    const made = (await custom
      .createNamespacedCustomObject({ ...where(obj.kind), body })
      .catch((e: unknown) => {
        throw kubeError(e, `create ${obj.kind} ${namespace}/${obj.name}`);
      })) as { metadata?: { uid?: string } };
    return {
      uid: made.metadata?.uid ?? '',
      spec: JSON.stringify(obj.spec),
      status: '',
      conditions: [],
    };
  };

  const put = async (obj: MirrorObject, now: string): Promise<void> => {
    const k = key(obj.kind, obj.name);
    const w = written.get(k) ?? (await create(obj));
    written.set(k, w);
    const at = { ...where(obj.kind), name: obj.name };
    const failed = (what: string) => (e: unknown) => {
      // Deleted by someone: forget it, so the next sync creates it again.
      if (statusOf(e) === 404) written.delete(k);
      throw kubeError(e, `update the ${what} of ${obj.kind} ${namespace}/${obj.name}`);
    };
    const spec = JSON.stringify(obj.spec);
    if (spec !== w.spec) {
      await custom
        .patchNamespacedCustomObject({ ...at, body: { spec: obj.spec } }, merge)
        .catch(failed('spec'));
      w.spec = spec;
    }
    const status = withoutTimes(obj.status);
    if (status === w.status) return;
    const conditions = stampTransitions(obj.status.conditions, w.conditions, now);
    await custom
      .patchNamespacedCustomObjectStatus(
        { ...at, body: { status: { ...obj.status, conditions } } },
        merge,
      )
      .catch(failed('status'));
    w.status = status;
    w.conditions = conditions;
  };

  const remove = async (k: string): Promise<void> => {
    const [kind, name] = k.split('/') as [MirrorKind, string];
    await custom.deleteNamespacedCustomObject({ ...where(kind), name }).catch((e: unknown) => {
      if (statusOf(e) !== 404) throw kubeError(e, `delete ${kind} ${namespace}/${name}`);
    });
    written.delete(k);
  };

  const reference = (r: { kind: MirrorKind; name: string }) => ({
    apiVersion: `${group}/${version}`,
    kind: r.kind,
    name: r.name,
    namespace,
    uid: written.get(key(r.kind, r.name))?.uid ?? '',
  });

  const emit = async (e: EventSpec): Promise<void> => {
    await core
      .createNamespacedEvent({
        namespace,
        body: {
          metadata: { name: e.name, namespace },
          type: e.type,
          reason: e.reason,
          message: e.message,
          involvedObject: reference(e.involved),
          ...(e.related !== undefined && { related: reference(e.related) }),
          source: { component: 'molt-operator' },
          reportingComponent: 'molt.dev/operator',
          reportingInstance: 'molt-operator',
          firstTimestamp: new Date(e.at),
          lastTimestamp: new Date(e.at),
          count: 1,
        },
      })
      .catch((err: unknown) => {
        if (statusOf(err) !== 409) throw kubeError(err, `create Event ${namespace}/${e.name}`);
      });
  };

  return {
    async sync(input, history, now) {
      if (!loaded) await load();
      const stamp = new Date(now).toISOString();
      const wanted = mirrorObjects(input);
      for (const obj of wanted) await put(obj, stamp);
      const keep = new Set(wanted.map((w) => key(w.kind, w.name)));
      for (const k of [...written.keys()]) if (!keep.has(k)) await remove(k);
      for (const h of await history(lastSeq)) {
        const e = h.at >= now - eventHorizonMs ? eventFor(h) : undefined;
        if (e !== undefined) await emit(e);
        lastSeq = h.seq;
      }
    },
  };
}
