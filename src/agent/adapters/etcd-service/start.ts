// SPDX-License-Identifier: Apache-2.0
/** Start-up helpers for the etcd service: waiting until it listens (its environment: platform/etcd). */
import { readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { ErrorCode, MoltError } from '../../../core/errors.ts';
import { accepts, pidAlive } from '../process-service/pid.ts';

/**
 * Wait until etcd accepts connections on its peer and client ports. Not until it is healthy: a
 * member of a cluster whose peers are still down serves no requests (it waits for quorum to
 * publish itself), and starting it must not wait for the other machines.
 */
export async function waitListening(a: {
  readonly pid: number;
  readonly options: {
    readonly peerUrl: string;
    readonly clientUrl: string;
    readonly startTimeoutMs?: number;
  };
  readonly log: string;
}): Promise<void> {
  const deadline = performance.now() + (a.options.startTimeoutMs ?? 15_000);
  for (;;) {
    const up = (await accepts(a.options.peerUrl)) && (await accepts(a.options.clientUrl));
    // A port held by another process also accepts; etcd then exits within moments ("address
    // already in use", a bad flag), so it must still be alive a little after its ports answer.
    if (up) await sleep(300);
    if (!(await pidAlive(a.pid)))
      throw await startFailed(a.log, `etcd (PID ${a.pid}) exited at start`);
    if (up) return;
    if (performance.now() >= deadline)
      throw await startFailed(a.log, 'etcd did not listen in time');
    await sleep(50);
  }
}

async function startFailed(log: string, message: string): Promise<MoltError> {
  const tail = (await readFile(log, 'utf8').catch(() => '')).slice(-2000);
  return new MoltError(ErrorCode.EtcdUnhealthy, `${message}:\n${tail}`, { hint: `see ${log}` });
}
