// SPDX-License-Identifier: Apache-2.0
/**
 * {@link MachineProvider} over Cluster API (docs/adr/0014 decision 6): a pool with
 * `provider: {capi: {}}` has CAPI replace a machine — molt hands the Machine back for
 * remediation (decision 5: a control-plane Machine annotated `cluster.x-k8s.io/remediate-machine`,
 * KCP replaces it; another one deleted, its MachineSet creates a new one).
 *
 * - `replace`: the Machines mapped to the molt machine (annotation `molt.dev/machine`, else
 *   providerID `molt://<id>`; never by name: the call is destructive) whose Cluster
 *   (`<namespace>/<clusterName>`) `capi.clusters` maps to the machine's pool — a Machine anyone
 *   annotates with the id elsewhere is not counted, so it can neither block the replace nor stand
 *   in for its replacement. Exactly one not being
 *   deleted is remediated, and the operation is `capi:<namespace>/<name>/<uid>`. Asked again for
 *   the same machine and digest, or while a mapped Machine is already being deleted, the same
 *   operation answers (nothing more is remediated). None, or two and more, is
 *   `MOLT_PROVIDER_FAILED`.
 * - `status`: the old Machine (its uid) still there → running; gone, and a new Machine (another
 *   uid) maps to the molt machine with a Node → succeeded; else running. The operator then waits
 *   for the machine's agent to answer on the target digest: the infrastructure provider's template
 *   must install molt's release (a molt-aware one sets providerID `molt://<id>`).
 *
 * Transport failures and retryable API answers are `MOLT_PROVIDER_UNREACHABLE` (the operator asks
 * again next pass); any other refusal is `MOLT_PROVIDER_FAILED`.
 */
import { makeRoom } from '../../../core/bounded.ts';
import { inPoolCluster, type ClusterPools } from '../../../core/capi/machine-map.ts';
import { ErrorCode, isMoltError, MoltError } from '../../../core/errors.ts';
import type { CapiMachineFound, CapiMachines } from '../../ports/capi-machines.ts';
import type { MachineProvider, ProviderOperation } from '../../ports/provider.ts';
import type { MachineRecord } from '../../ports/store.ts';

/** The operation id's prefix: `capi:<namespace>/<name>/<uid>`. */
export const CapiOperationPrefix = 'capi:';

const hint =
  "check the Machines on the management cluster (kubectl get machines -A) and molt's access to them (capi.kubeconfig)";

const refused = (message: string): MoltError =>
  new MoltError(ErrorCode.ProviderFailed, message, { hint });

const name = (m: { readonly namespace: string; readonly name: string }): string =>
  `${m.namespace}/${m.name}`;

export const capiOperationId = (m: CapiMachineFound): string =>
  `${CapiOperationPrefix}${name(m)}/${m.uid}`;

/** The Machine an operation id names; anything else is not one of this provider's. */
function parseOperation(id: string): { readonly machine: string; readonly uid: string } {
  const [namespace, machine, uid, ...rest] = id.slice(CapiOperationPrefix.length).split('/');
  if (
    !id.startsWith(CapiOperationPrefix) ||
    rest.length > 0 ||
    namespace === undefined ||
    namespace === '' ||
    machine === undefined ||
    machine === '' ||
    uid === undefined ||
    uid === ''
  )
    throw refused(
      `operation ${JSON.stringify(id)} is not a Cluster API replace (capi:<ns>/<name>/<uid>)`,
    );
  return { machine: `${namespace}/${machine}`, uid };
}

/** The Machines port's failures as the provider's: retryable → unreachable, else refused. */
async function asked<T>(what: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (e) {
    if (!isMoltError(e)) throw e;
    const message = `${what}: ${e.message}`;
    if (e.retryable)
      throw new MoltError(ErrorCode.ProviderUnreachable, message, { cause: e, retryable: true });
    throw new MoltError(ErrorCode.ProviderFailed, message, {
      cause: e,
      hint: e.hint ?? hint,
    });
  }
}

/**
 * The Machine a replace is about: the one already being deleted (CAPI is replacing it: nothing
 * more to do), else the only one mapped (to remediate); none or several is refused.
 */
function choose(
  what: string,
  id: string,
  found: readonly CapiMachineFound[],
): { readonly target: CapiMachineFound; readonly remediate: boolean } {
  const deleting = found.filter((m) => m.deleting);
  const live = found.filter((m) => !m.deleting);
  if (deleting.length > 1 || live.length > 1)
    throw refused(
      `${what}: ${String(found.length)} Cluster API Machines map to ${id}: ${found.map(name).join(', ')}`,
    );
  if (deleting[0] !== undefined) return { target: deleting[0], remediate: false };
  if (live[0] !== undefined) return { target: live[0], remediate: true };
  throw refused(
    `${what}: no Cluster API Machine maps to ${id} (annotation molt.dev/machine or providerID molt://${id}, in a Cluster capi.clusters maps to its pool)`,
  );
}

/** Replaces remembered (the oldest forgotten past it: a long-lived operator's memory is bounded). */
const ReplacesRemembered = 10_000;

export function createCapiProvider(
  machines: Pick<CapiMachines, 'find' | 'remediate'>,
  clusters: ClusterPools,
): MachineProvider {
  /** The Machines mapped to `machine` in a Cluster mapped to its pool; others are not its. */
  const mapped = async (what: string, machine: MachineRecord) =>
    (await asked(what, () => machines.find(machine.id))).filter((m) =>
      inPoolCluster(m, machine.pool, clusters),
    );
  /**
   * The operation answered per molt machine and digest (asked again after the Machine is gone).
   * The executor records the operation id and asks `status` after, so `replace` is asked again
   * only around its start: the newest entries are the ones that matter.
   */
  const started = new Map<string, string>();
  return {
    async replace(machine, request) {
      const what = `replace ${machine.id} through Cluster API`;
      const key = `${machine.id}@${request.digest}`;
      const known = started.get(key);
      if (known !== undefined) return { operationId: known };
      const found = await mapped(what, machine);
      const { target, remediate } = choose(what, machine.id, found);
      if (remediate) await asked(what, () => machines.remediate(target));
      const operationId = capiOperationId(target);
      makeRoom(started, ReplacesRemembered);
      started.set(key, operationId);
      return { operationId };
    },
    async status(machine, operationId): Promise<ProviderOperation> {
      const old = parseOperation(operationId);
      const what = `replace ${machine.id} through Cluster API (operation ${operationId})`;
      const found = await mapped(what, machine);
      if (found.some((m) => m.uid === old.uid))
        return { state: 'running', message: `Cluster API is replacing Machine ${old.machine}` };
      const replacement = found.find((m) => !m.deleting && m.nodeRef !== undefined);
      if (replacement !== undefined)
        return {
          state: 'succeeded',
          message: `Machine ${name(replacement)} (node ${replacement.nodeRef ?? ''}) replaced ${old.machine}`,
        };
      return {
        state: 'running',
        message: `waiting for the replacement Machine to map to ${machine.id}`,
      };
    },
  };
}
