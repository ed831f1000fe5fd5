// SPDX-License-Identifier: Apache-2.0
/**
 * The machine's services one by one (docs/adr/0012 §6): what `molt node service …` and
 * `molt node logs --service` reach when Kubernetes is down. The upgrade's {@link Services} port
 * moves all of them at once; this one names each (`etcd`, `kube-apiserver`, …). Adapters: the lab's
 * detached processes (PID and output in `<root>/run/<name>.pid|.log`) and systemd units.
 * Start and stop are level-triggered, as in {@link Services}.
 */
import { ErrorCode, MoltError } from '../../core/errors.ts';
import type { ServiceView } from '../../protocol/agent-kubernetes.ts';

export type { ServiceView };

/** What `logs` returns: the last `tail` lines, then (when following) new ones until `signal` aborts. */
export interface LogOptions {
  readonly tail: number;
  readonly follow: boolean;
  readonly signal: AbortSignal;
}

export interface ServiceControl {
  /** Every service the machine runs, in start order, running or not. */
  list(): Promise<ServiceView[]>;
  /** @throws MoltError `MOLT_SERVICE_NOT_FOUND` for a name {@link list} does not have. */
  start(name: string): Promise<ServiceView>;
  stop(name: string): Promise<ServiceView>;
  restart(name: string): Promise<ServiceView>;
  /**
   * The service's output as lines (without line ends); checks the name before it yields.
   * @throws MoltError `MOLT_SERVICE_NOT_FOUND`
   */
  logs(name: string, options: LogOptions): Promise<AsyncIterable<string>>;
}

/** MOLT_SERVICE_NOT_FOUND naming what the machine does run. */
export function serviceNotFound(name: string, known: readonly string[]): MoltError {
  return new MoltError(ErrorCode.ServiceNotFound, `this machine runs no service ${name}`, {
    hint:
      known.length === 0
        ? 'it runs no services molt manages'
        : `its services: ${known.join(', ')} (molt node service list)`,
  });
}
