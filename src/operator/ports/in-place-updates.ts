// SPDX-License-Identifier: Apache-2.0
/**
 * The port behind Cluster API's UpdateMachine hook (issue 20): move one machine molt manages to the
 * molt release of a Kubernetes version, and say how far it got. CAPI asks again every
 * `retryAfterSeconds` until the answer is done or failed, so `update` is called many times for one
 * update and must be idempotent: the first call starts it, later ones report on it.
 */

/** A CAPI Machine (or the MachineSet a MachineDeployment rolls out) as molt keys it. */
export interface CapiMachineRef {
  readonly kind: 'Machine' | 'MachineSet';
  readonly namespace: string;
  readonly name: string;
  /** The CAPI Cluster (`spec.clusterName`). */
  readonly clusterName: string;
  /** The Machine's `spec.providerID` (`in-memory://…`), where it has one. */
  readonly providerID?: string | undefined;
  /** The Machine's annotation `molt.dev/machine`: the molt machine it is, named by a person. */
  readonly moltMachine?: string | undefined;
  /** A Machine with the label `cluster.x-k8s.io/control-plane` (KCP's). */
  readonly controlPlane?: boolean | undefined;
}

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
  /** Whether molt manages this Machine (or every Machine of this MachineSet); others are not touched. */
  manages(ref: CapiMachineRef): Promise<boolean>;
  /** Start, or report on, moving `machine` to the release of Kubernetes `desiredVersion`. */
  update(machine: CapiMachineRef, desiredVersion: string): Promise<InPlaceUpdateState>;
}
