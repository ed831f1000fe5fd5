// SPDX-License-Identifier: Apache-2.0
/**
 * {@link Workloads} on a real cluster through @kubernetes/client-node (docs/adr/0013 §4): paged
 * lists of Deployments, DaemonSets and StatefulSets across namespaces; an image change as one JSON
 * patch (`application/json-patch+json`) that tests each container's name and image at the index
 * read before replacing the image, so the API server applies all of it or none; progress read by
 * `workloadProgress` from the object's status; platforms from the Nodes' `status.nodeInfo`.
 */
import {
  AppsV1Api,
  CoreV1Api,
  PatchStrategy,
  setHeaderOptions,
  type KubeConfig,
  type V1Container,
  type V1Node,
} from '@kubernetes/client-node';
import type { WorkloadKind } from '../../../core/images/types.ts';
import {
  workloadEdited,
  workloadNotFound,
  type EditedContainer,
} from '../../../core/images/workload-errors.ts';
import { workloadProgress } from '../../../core/images/workload-progress.ts';
import type { WorkloadView } from '../../../core/images/workload.ts';
import { kubeError, statusOf } from '../../../platform/kube/client.ts';
import type { ImageChange, WorkloadRef, Workloads } from '../../ports/workloads.ts';

const jsonPatch = setHeaderOptions('Content-Type', PatchStrategy.JsonPatch);

/** The fields of a Deployment, DaemonSet or StatefulSet this adapter reads. */
interface AppsObject {
  metadata?: { name?: string; namespace?: string; labels?: Record<string, string> };
  spec?: {
    template?: { spec?: { containers?: V1Container[]; initContainers?: V1Container[] } };
  };
}

interface Page<T> {
  items: T[];
  metadata?: { _continue?: string };
}

type Lister = (o: { limit: number; _continue?: string }) => Promise<Page<AppsObject>>;

export interface KubeWorkloadsOptions {
  readonly kc: KubeConfig;
  /** Objects per list request. @default 500 */
  readonly pageSize?: number;
}

async function listAll(list: Lister, limit: number): Promise<AppsObject[]> {
  const out: AppsObject[] = [];
  let next: string | undefined;
  do {
    const page = await list({ limit, ...(next !== undefined && { _continue: next }) });
    out.push(...page.items);
    next = page.metadata?._continue || undefined;
  } while (next !== undefined);
  return out;
}

function view(kind: WorkloadKind, o: AppsObject): WorkloadView {
  const pod = o.spec?.template?.spec;
  const c = (x: V1Container, init: boolean) => ({
    name: x.name,
    image: x.image ?? '',
    ...(init && { init: true }),
  });
  return {
    kind,
    namespace: o.metadata?.namespace ?? '',
    name: o.metadata?.name ?? '',
    labels: { ...o.metadata?.labels },
    containers: [
      ...(pod?.initContainers ?? []).map((x) => c(x, true)),
      ...(pod?.containers ?? []).map((x) => c(x, false)),
    ],
    available: workloadProgress(kind, o).state === 'available',
  };
}

/** Where a container named `name` is in the pod template, or undefined. */
function locate(o: AppsObject, name: string): { path: string; image: string } | undefined {
  const pod = o.spec?.template?.spec;
  for (const [field, list] of [
    ['containers', pod?.containers],
    ['initContainers', pod?.initContainers],
  ] as const) {
    const i = (list ?? []).findIndex((c) => c.name === name);
    if (i >= 0)
      return { path: `/spec/template/spec/${field}/${String(i)}`, image: list?.[i]?.image ?? '' };
  }
  return undefined;
}

/** What each change's container runs in `o`, for those that differ from `from`. */
function editedIn(o: AppsObject, changes: readonly ImageChange[]): EditedContainer[] {
  return changes.flatMap((ch) => {
    const now = locate(o, ch.container)?.image;
    return now === ch.from ? [] : [{ container: ch.container, expected: ch.from, now }];
  });
}

export function createKubeWorkloads(o: KubeWorkloadsOptions): Workloads {
  const apps = o.kc.makeApiClient(AppsV1Api);
  const core = o.kc.makeApiClient(CoreV1Api);
  const limit = o.pageSize ?? 500;
  const id = (r: WorkloadRef): string => `${r.kind}/${r.namespace}/${r.name}`;

  const read = async (ref: WorkloadRef): Promise<AppsObject> => {
    const args = { name: ref.name, namespace: ref.namespace };
    try {
      switch (ref.kind) {
        case 'Deployment':
          return await apps.readNamespacedDeployment(args);
        case 'DaemonSet':
          return await apps.readNamespacedDaemonSet(args);
        case 'StatefulSet':
          return await apps.readNamespacedStatefulSet(args);
      }
    } catch (e) {
      if (statusOf(e) === 404) throw workloadNotFound(ref, e);
      throw kubeError(e, `read ${id(ref)}`);
    }
  };

  const patch = async (ref: WorkloadRef, body: object[]): Promise<void> => {
    const args = { name: ref.name, namespace: ref.namespace, body };
    switch (ref.kind) {
      case 'Deployment':
        await apps.patchNamespacedDeployment(args, jsonPatch);
        return;
      case 'DaemonSet':
        await apps.patchNamespacedDaemonSet(args, jsonPatch);
        return;
      case 'StatefulSet':
        await apps.patchNamespacedStatefulSet(args, jsonPatch);
        return;
    }
  };

  return {
    async list() {
      const kinds: [WorkloadKind, Lister][] = [
        ['Deployment', (p) => apps.listDeploymentForAllNamespaces(p)],
        ['DaemonSet', (p) => apps.listDaemonSetForAllNamespaces(p)],
        ['StatefulSet', (p) => apps.listStatefulSetForAllNamespaces(p)],
      ];
      try {
        const lists = await Promise.all(kinds.map(([, list]) => listAll(list, limit)));
        return kinds.flatMap(([kind], i) => (lists[i] ?? []).map((x) => view(kind, x)));
      } catch (e) {
        throw kubeError(e, 'list Deployments, DaemonSets and StatefulSets');
      }
    },

    async setImages(ref, changes) {
      if (changes.length === 0) return;
      const current = await read(ref);
      // The indices come from this read; whether the images are still `from` is the API
      // server's to decide, atomically, by the patch's `test` ops.
      const gone = changes.filter((ch) => locate(current, ch.container) === undefined);
      if (gone.length > 0) throw workloadEdited(ref, editedIn(current, gone));
      const ops = changes.flatMap((ch) => {
        const at = locate(current, ch.container);
        return at === undefined
          ? []
          : [
              { op: 'test', path: `${at.path}/name`, value: ch.container },
              { op: 'test', path: `${at.path}/image`, value: ch.from },
              { op: 'replace', path: `${at.path}/image`, value: ch.to },
            ];
      });
      try {
        await patch(ref, ops);
      } catch (e) {
        const status = statusOf(e);
        if (status === 404) throw workloadNotFound(ref, e);
        // A failed `test` op is 422: someone changed the workload between the read and the
        // patch (nothing was applied). Say what it runs now.
        if (status === 422 || status === 409) {
          const now = await read(ref);
          throw workloadEdited(ref, editedIn(now, changes));
        }
        throw kubeError(e, `patch the images of ${id(ref)}`);
      }
    },

    async progress(ref) {
      return workloadProgress(ref.kind, await read(ref));
    },

    async platforms() {
      let nodes: V1Node[];
      try {
        nodes = (await core.listNode()).items;
      } catch (e) {
        throw kubeError(e, 'list Nodes');
      }
      const of = (n: V1Node): string | undefined => {
        const labels = n.metadata?.labels ?? {};
        const os = n.status?.nodeInfo?.operatingSystem || labels['kubernetes.io/os'];
        const arch = n.status?.nodeInfo?.architecture || labels['kubernetes.io/arch'];
        // A Node reports no CPU variant: `os/arch` only.
        return os && arch ? `${os}/${arch}` : undefined;
      };
      return [...new Set(nodes.map(of).filter((p) => p !== undefined))].sort();
    },
  };
}
