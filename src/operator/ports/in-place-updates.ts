// SPDX-License-Identifier: Apache-2.0
/**
 * The port behind Cluster API's UpdateMachine hook: move one machine molt manages to the
 * molt release of a Kubernetes version, and say how far it got. CAPI asks again every
 * `retryAfterSeconds` until the answer is done or failed, so `update` is called many times for one
 * update and must be idempotent: the first call starts it, later ones report on it.
 */

/**
 * Where a hook request points: the Machine (or the MachineSet whose Machines a MachineDeployment
 * would update in place) it names. Only where molt looks — nothing else of the request is trusted
 * (docs/adr/0014 decision 2): a Machine, or a MachineSet's Machines, are read from the management
 * cluster.
 */
export interface CapiMachineRef {
  readonly kind: 'Machine' | 'MachineSet';
  readonly namespace: string;
  readonly name: string;
  /** The CAPI Cluster (`spec.clusterName`) the request says; a Machine's own is read instead. */
  readonly clusterName: string;
}

/** A Machine molt manages, as molt resolved it from its own read of the management cluster. */
export interface ManagedMachine {
  readonly kind: 'Machine';
  readonly namespace: string;
  readonly name: string;
  /** The molt machine it is. */
  readonly machine: string;
  /** That machine's pool (which the Machine's Cluster is mapped to). */
  readonly pool: string;
  /** It carries the control-plane label on the management cluster (KCP's: remediated by annotation). */
  readonly controlPlane: boolean;
  /** Its `spec.version` on the management cluster. */
  readonly version?: string | undefined;
  /** Its uid as read: what a remediation acts on (a Machine recreated under its name is not it). */
  readonly uid?: string | undefined;
}

/**
 * A MachineSet whose every Machine (as molt read them) is a molt machine it manages: the Machines
 * an in-place update of the set would move, and their pools.
 */
export interface ManagedMachineSet {
  readonly kind: 'MachineSet';
  readonly namespace: string;
  readonly name: string;
  /** The CAPI Cluster the request says (informational: each Machine's own was checked). */
  readonly clusterName: string;
  /** The pools of its Machines' molt machines. */
  readonly pools: readonly string[];
  /** Its Machines' molt machines. */
  readonly machines: readonly string[];
}

export type Managed = ManagedMachine | ManagedMachineSet;

/** What molt made of a request's Machine or MachineSet: managed, or why not (nothing changes). */
export type Resolution = { readonly managed: Managed } | { readonly refused: string };

/** The Machine annotation that names the molt machine behind it (any infrastructure provider). */
export const MoltMachineAnnotation = 'molt.dev/machine';

/** Where an in-place update stands; `message` is shown in the Machine's Updating condition. */
export interface InPlaceUpdateState {
  readonly state: 'in-progress' | 'done' | 'failed';
  readonly message: string;
  /**
   * Failed on the machine itself (it failed the release and rolled back): a replacement may
   * help. A failure molt had before touching it (no release carries the version, its pool is not
   * configured) leaves it false — replacing the Machine would not fix molt's configuration.
   */
  readonly machineFailed?: boolean;
}

/** molt's in-place updates of CAPI Machines. */
export interface InPlaceUpdates {
  /**
   * The Machine (read from the management cluster, mapped to a molt machine of a pool its Cluster
   * is mapped to) or MachineSet (its Machines, read, each so mapped) molt manages that `ref`
   * points at; anything else is refused and not touched. Throws a retryable MoltError when the
   * read fails.
   */
  resolve(ref: CapiMachineRef): Promise<Resolution>;
  /** Start, or report on, moving `machine` to the release of Kubernetes `desiredVersion`. */
  update(machine: ManagedMachine, desiredVersion: string): Promise<InPlaceUpdateState>;
}
