// SPDX-License-Identifier: Apache-2.0
/**
 * The machine services the upgrade stops and starts (etcd on control-plane machines). Both are
 * level-triggered: stopping a stopped service or starting a running one succeeds.
 */
export interface Services {
  /** Throws `MOLT_SERVICE_STOP_FAILED` when a service does not stop in time. */
  stopAll(): Promise<void>;
  startAll(): Promise<void>;
  running(): Promise<readonly string[]>;
}
