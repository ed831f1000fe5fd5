// SPDX-License-Identifier: Apache-2.0
/**
 * Lab machine services as detached processes: the control-plane components (supervisor.ts), and
 * how a machine's services are put in order around a reboot.
 */
import type { Services } from '../../ports/services.ts';

export { createProcessSupervisor, type ProcessSupervisorOptions } from './supervisor.ts';

/** Services started in order and stopped in reverse (etcd before the API server that uses it). */
export function servicesInOrder(all: readonly Services[]): Services {
  return {
    async startAll() {
      for (const s of all) await s.startAll();
    },
    async stopAll() {
      for (const s of [...all].reverse()) await s.stopAll();
    },
    async running() {
      return (await Promise.all(all.map((s) => s.running()))).flat();
    },
  };
}
