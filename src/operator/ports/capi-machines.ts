// SPDX-License-Identifier: Apache-2.0
/**
 * The Cluster API Machines molt writes to on the management cluster (docs/adr/0014 decision 5):
 * the Machine's condition `MoltInPlaceUpdate` (molt's own words on an in-place update: CAPI shows
 * only a generic message), and the end of CAPI's retry loop after a failed update — a control-plane
 * Machine is annotated `cluster.x-k8s.io/remediate-machine` (KCP replaces it), another one is
 * deleted (its MachineSet creates a new one). Failures are MoltErrors `MOLT_CAPI_WRITE_FAILED`.
 * The replace direction (decision 6) finds the Machines a molt machine maps to; the hooks read the
 * Machine a request names (`get`), or a MachineSet's Machines (`ofMachineSet`), and trust only
 * that read.
 */

/** The condition type molt owns on a Machine. */
export const MoltInPlaceCondition = 'MoltInPlaceUpdate';
/** The annotation KCP reads as "replace this Machine". */
export const RemediateMachineAnnotation = 'cluster.x-k8s.io/remediate-machine';
/** The label every control-plane Machine carries. */
export const ControlPlaneLabel = 'cluster.x-k8s.io/control-plane';
/** The label a MachineSet puts on each Machine it owns: the MachineSet's name. */
export const MachineSetLabel = 'cluster.x-k8s.io/set-name';
/** The annotation that names a Machine's molt machine (else its providerID `molt://<id>`). */
export const MoltMachineAnnotation = 'molt.dev/machine';
/** The providerID scheme of a molt-aware infrastructure provider: `molt://<machine id>`. */
export const MoltProviderIdPrefix = 'molt://';

/** One Machine on the management cluster. */
export interface CapiMachineKey {
  readonly namespace: string;
  readonly name: string;
  /** Whether it carries {@link ControlPlaneLabel} (KCP owns it). */
  readonly controlPlane: boolean;
  /**
   * The uid molt read it with. A remediation given one acts only on that object: a Machine deleted
   * and created again under the same name is another Machine, and counts as gone.
   */
  readonly uid?: string | undefined;
}

/** A Machine as molt read it from the management cluster (found by the molt machine it maps to, or read by name). */
export interface CapiMachineFound extends CapiMachineKey {
  readonly uid: string;
  /** Its `spec.clusterName`: with its namespace, the Cluster `capi.clusters` maps to pools. */
  readonly clusterName: string;
  /** The molt machine its own annotation or providerID names ({@link mappedMoltMachine}). */
  readonly moltMachine?: string;
  /** Its `spec.version` (the Kubernetes version CAPI wants it at). */
  readonly version?: string;
  /** It has a deletionTimestamp (CAPI is draining and deleting it). */
  readonly deleting: boolean;
  /** The name of its Node in the workload cluster, once it has one. */
  readonly nodeRef?: string;
}

/** molt's condition on a Machine (a CAPI v1beta2 condition of type {@link MoltInPlaceCondition}). */
export interface MoltCondition {
  readonly status: 'True' | 'False' | 'Unknown';
  /** CamelCase, as CAPI's schema requires. */
  readonly reason: string;
  readonly message: string;
  /** RFC 3339: when `status` last changed. */
  readonly lastTransitionTime: string;
}

/** How a Machine was handed back to CAPI for replacement. */
export type Remediation = 'annotated' | 'deleted' | 'gone';

export interface CapiMachines {
  /** Set the Machine's {@link MoltInPlaceCondition}, leaving every other condition as it is. */
  setCondition(ref: CapiMachineKey, condition: MoltCondition): Promise<void>;
  /** Ask CAPI to replace the Machine; idempotent (already annotated, or gone, is success). */
  remediate(ref: CapiMachineKey): Promise<Remediation>;
  /**
   * The Machines, in every namespace, that map to molt machine `moltMachine`: by the
   * {@link MoltMachineAnnotation} annotation, else by providerID `molt://<id>` — never by name
   * (too loose for a destructive call).
   */
  find(moltMachine: string): Promise<readonly CapiMachineFound[]>;
  /**
   * The Machine `namespace/name` as the management cluster has it (undefined: not there): what
   * molt trusts about a Machine a hook request names, instead of the request's copy.
   */
  get(namespace: string, name: string): Promise<CapiMachineFound | undefined>;
  /**
   * The Machines of MachineSet `namespace/machineSet` (labelled {@link MachineSetLabel}) as the
   * management cluster has them: the Machines an in-place MachineSet update would move.
   */
  ofMachineSet(namespace: string, machineSet: string): Promise<readonly CapiMachineFound[]>;
}

/** The molt machine a Machine maps to by annotation or providerID (not by name), if any. */
export function mappedMoltMachine(m: {
  readonly annotations?: Readonly<Record<string, string>> | undefined;
  readonly providerID?: string | undefined;
}): string | undefined {
  const annotated = m.annotations?.[MoltMachineAnnotation];
  if (annotated !== undefined && annotated !== '') return annotated;
  return m.providerID?.startsWith(MoltProviderIdPrefix) === true
    ? m.providerID.slice(MoltProviderIdPrefix.length)
    : undefined;
}
