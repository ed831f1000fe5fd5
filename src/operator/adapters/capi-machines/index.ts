// SPDX-License-Identifier: Apache-2.0
/**
 * {@link CapiMachines} on the management cluster's API (`capi.kubeconfig`), through the official
 * client. The condition goes in by server-side apply on the Machine's `status` subresource with
 * field manager `molt`: v1beta2 `status.conditions` is a map list keyed by `type`, so molt owns its
 * one entry and CAPI's conditions are left as they are (a merge patch would replace the list).
 * Remediation: a control-plane Machine is annotated `cluster.x-k8s.io/remediate-machine` (a merge
 * patch of that one key), another Machine is deleted. `find` lists Machines cluster-wide (every
 * namespace) and keeps those mapped to the molt machine by annotation or providerID; `get` reads
 * one Machine, `ofMachineSet` a MachineSet's (by its label `cluster.x-k8s.io/set-name`); a read
 * that fails is `MOLT_CAPI_READ_FAILED`. Every call is bounded by `timeoutMs`.
 */
import {
  CustomObjectsApi,
  PatchStrategy,
  setHeaderOptions,
  type ConfigurationOptions,
  Observable,
  type KubeConfig,
  type ObservableMiddleware,
} from '@kubernetes/client-node';
import { z } from 'zod';
import { ErrorCode, MoltError } from '../../../core/errors.ts';
import { kubeError, statusOf } from '../../../platform/kube/client.ts';
import {
  ControlPlaneLabel,
  MachineSetLabel,
  mappedMoltMachine,
  MoltInPlaceCondition,
  RemediateMachineAnnotation,
  type CapiMachineFound,
  type CapiMachineKey,
  type CapiMachines,
  type MoltCondition,
  type Remediation,
} from '../../ports/capi-machines.ts';

/** The field manager of molt's writes (its entry in the Machine's managedFields). */
export const CapiFieldManager = 'molt';
/** Each call's bound (CAPI waits 10 s for the whole hook answer). @default 3000 */
export const CapiWriteTimeoutMs = 3_000;

const machines = { group: 'cluster.x-k8s.io', version: 'v1beta2', plural: 'machines' } as const;

/** A middleware that aborts each request after `ms`. */
function deadline(ms: number): ObservableMiddleware {
  return {
    pre: (request) => {
      request.setSignal(AbortSignal.timeout(ms));
      return new Observable(Promise.resolve(request));
    },
    post: (response) => new Observable(Promise.resolve(response)),
  };
}

/** What `find` reads of a Machine; everything else is CAPI's and passes through unread. */
const listedMachine = z.looseObject({
  metadata: z.looseObject({
    name: z.string(),
    namespace: z.string(),
    uid: z.string(),
    labels: z.record(z.string(), z.string()).optional(),
    annotations: z.record(z.string(), z.string()).optional(),
    deletionTimestamp: z.string().optional(),
  }),
  spec: z.looseObject({
    clusterName: z.string(),
    providerID: z.string().optional(),
    version: z.string().optional(),
  }),
  status: z.looseObject({ nodeRef: z.looseObject({ name: z.string() }).optional() }).optional(),
});
const machineList = z.looseObject({ items: z.array(listedMachine) });

const mappingOf = (m: z.infer<typeof listedMachine>): string | undefined =>
  mappedMoltMachine({ annotations: m.metadata.annotations, providerID: m.spec.providerID });

function found(m: z.infer<typeof listedMachine>): CapiMachineFound {
  const node = m.status?.nodeRef?.name;
  const moltMachine = mappingOf(m);
  return {
    namespace: m.metadata.namespace,
    name: m.metadata.name,
    uid: m.metadata.uid,
    clusterName: m.spec.clusterName,
    controlPlane: m.metadata.labels?.[ControlPlaneLabel] !== undefined,
    deleting: m.metadata.deletionTimestamp !== undefined,
    ...(moltMachine !== undefined && { moltMachine }),
    ...(m.spec.version !== undefined && { version: m.spec.version }),
    ...(node !== undefined && node !== '' && { nodeRef: node }),
  };
}

export interface KubeCapiMachinesOptions {
  readonly kc: KubeConfig;
  readonly timeoutMs?: number;
}

export function createKubeCapiMachines(o: KubeCapiMachinesOptions): CapiMachines {
  const api = o.kc.makeApiClient(CustomObjectsApi);
  const bounded: ConfigurationOptions = {
    middleware: [deadline(o.timeoutMs ?? CapiWriteTimeoutMs)],
    middlewareMergeStrategy: 'append',
  };
  const apply = setHeaderOptions('Content-Type', PatchStrategy.ServerSideApply, bounded);
  const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch, bounded);
  const fail = (
    e: unknown,
    what: string,
    code: ErrorCode = ErrorCode.CapiWriteFailed,
  ): MoltError => {
    const k = kubeError(e, what);
    return new MoltError(code, k.message, {
      cause: e,
      retryable: k.retryable,
      ...(k.hint !== undefined && { hint: k.hint }),
    });
  };
  const self: CapiMachines = {
    async setCondition(ref: CapiMachineKey, c: MoltCondition): Promise<void> {
      const body = {
        apiVersion: `${machines.group}/${machines.version}`,
        kind: 'Machine',
        metadata: { name: ref.name, namespace: ref.namespace },
        status: { conditions: [{ type: MoltInPlaceCondition, ...c }] },
      };
      await api
        .patchNamespacedCustomObjectStatus(
          {
            ...machines,
            namespace: ref.namespace,
            name: ref.name,
            body,
            fieldManager: CapiFieldManager,
            force: true,
          },
          apply,
        )
        .catch((e: unknown) => {
          throw fail(
            e,
            `set the ${MoltInPlaceCondition} condition of Machine ${ref.namespace}/${ref.name}`,
          );
        });
    },
    async find(moltMachine: string): Promise<readonly CapiMachineFound[]> {
      const what = `list the Cluster API Machines (to find those mapped to ${moltMachine})`;
      const raw: unknown = await api
        .listClusterCustomObject(machines, bounded)
        .catch((e: unknown) => {
          throw fail(e, what);
        });
      const list = machineList.safeParse(raw);
      if (!list.success)
        throw new MoltError(
          ErrorCode.CapiWriteFailed,
          `${what}: not a Machine list: ${list.error.message}`,
        );
      return list.data.items.filter((m) => mappingOf(m) === moltMachine).map(found);
    },
    async get(namespace: string, name: string): Promise<CapiMachineFound | undefined> {
      const what = `read Machine ${namespace}/${name}`;
      const raw: unknown = await api
        .getNamespacedCustomObject({ ...machines, namespace, name }, bounded)
        .catch((e: unknown) => {
          if (statusOf(e) === 404) return undefined;
          throw fail(e, what, ErrorCode.CapiReadFailed);
        });
      if (raw === undefined) return undefined;
      const m = listedMachine.safeParse(raw);
      if (!m.success)
        throw new MoltError(ErrorCode.CapiReadFailed, `${what}: not a Machine: ${m.error.message}`);
      // The name asked for is the one read: a proxy answering another object is not trusted.
      if (m.data.metadata.namespace !== namespace || m.data.metadata.name !== name)
        throw new MoltError(ErrorCode.CapiReadFailed, `${what}: the API answered another object`);
      return found(m.data);
    },
    async ofMachineSet(
      namespace: string,
      machineSet: string,
    ): Promise<readonly CapiMachineFound[]> {
      const what = `list the Machines of MachineSet ${namespace}/${machineSet}`;
      const raw: unknown = await api
        .listNamespacedCustomObject(
          { ...machines, namespace, labelSelector: `${MachineSetLabel}=${machineSet}` },
          bounded,
        )
        .catch((e: unknown) => {
          throw fail(e, what, ErrorCode.CapiReadFailed);
        });
      const list = machineList.safeParse(raw);
      if (!list.success)
        throw new MoltError(
          ErrorCode.CapiReadFailed,
          `${what}: not a Machine list: ${list.error.message}`,
        );
      // Only what was asked for: a proxy answering other objects is not trusted.
      return list.data.items
        .filter(
          (m) =>
            m.metadata.namespace === namespace &&
            m.metadata.labels?.[MachineSetLabel] === machineSet,
        )
        .map(found);
    },
    async remediate(ref: CapiMachineKey): Promise<Remediation> {
      const at = { ...machines, namespace: ref.namespace, name: ref.name };
      // With a uid, the write is refused by the API server itself when the object under that
      // name is another one: a delete's precondition answers 409, and a uid in a patch is an
      // immutable field (422). Either way the Machine molt read is gone, which a read confirms.
      const gone = async (e: unknown, what: string): Promise<'gone'> => {
        const status = statusOf(e);
        if (status === 404) return 'gone';
        if (ref.uid !== undefined && (status === 409 || status === 422)) {
          const now = await self.get(ref.namespace, ref.name);
          if (now?.uid !== ref.uid) return 'gone';
        }
        throw fail(e, `${what} Machine ${ref.namespace}/${ref.name}`);
      };
      const uid = ref.uid === undefined ? {} : { uid: ref.uid };
      if (ref.controlPlane)
        return api
          .patchNamespacedCustomObject(
            {
              ...at,
              body: { metadata: { ...uid, annotations: { [RemediateMachineAnnotation]: '' } } },
              fieldManager: CapiFieldManager,
            },
            merge,
          )
          .then(
            () => 'annotated' as const,
            (e: unknown) => gone(e, 'annotate for remediation'),
          );
      const body = ref.uid === undefined ? {} : { body: { preconditions: { uid: ref.uid } } };
      return api.deleteNamespacedCustomObject({ ...at, ...body }, bounded).then(
        () => 'deleted' as const,
        (e: unknown) => gone(e, 'delete'),
      );
    },
  };
  return self;
}
