// SPDX-License-Identifier: Apache-2.0
/** Start-up helpers for the etcd service: its environment, and waiting until it listens. */
import { readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { ErrorCode, MoltError } from '../../../core/errors.ts';
import { accepts, pidAlive } from '../process-service/pid.ts';

/**
 * The parent's environment minus ETCD_* variables (etcd 3.4 refuses to start when a variable
 * shadows a flag), plus ETCD_UNSUPPORTED_ARCH where 3.4 would exit on an unsupported architecture.
 */
export function etcdEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('ETCD_')) env[k] = v;
  const goArch: Readonly<Record<string, string>> = {
    ia32: '386',
    arm: 'arm',
    s390x: 's390x',
    ppc64: 'ppc64le',
  };
  const unsupported = goArch[process.arch];
  if (unsupported !== undefined) env['ETCD_UNSUPPORTED_ARCH'] = unsupported;
  return env;
}

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
