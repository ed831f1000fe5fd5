// SPDX-License-Identifier: Apache-2.0
/** The EPHEMERAL area (etcd and workload data). */
export interface Mounts {
  /** Throws `MOLT_MOUNT_BUSY` when something still holds it. Level-triggered. */
  release(): Promise<void>;
  mount(): Promise<void>;
  /** Erase EPHEMERAL (preserve: false); idempotent per operation id. */
  wipe(operationId: string): Promise<void>;
}
