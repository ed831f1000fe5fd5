// SPDX-License-Identifier: Apache-2.0
/**
 * A service run as a detached process — on control-plane machines that host the cluster, a
 * kube-apiserver beside etcd (docs/adr/0006 §10) — as the etcd service is run: its PID in
 * `<root>/run/<name>.pid`, its output in `<root>/run/<name>.log`, found again by a restarted agent.
 * Under the lab firmware it ends with everything else of the boot (one of its arguments names a
 * path in the machine root, which is how the firmware recognises it). Level-triggered like etcd's.
 * (A real machine runs its services as systemd units: a later adapter of the same port.)
 */
import { mkdir, readFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ErrorCode, MoltError } from '../../../core/errors.ts';
import type { Services } from '../../ports/services.ts';
import {
  accepts,
  pidAlive,
  readPidFile,
  removePidFile,
  signal,
  waitGone,
  spawnDetached,
} from './pid.ts';

export interface ProcessServiceOptions {
  readonly root: string;
  readonly name: string;
  readonly binary: string;
  readonly args: readonly string[];
  /** Loopback port the service listens on once started. */
  readonly port: number;
  /** @default 60000 */
  readonly startTimeoutMs?: number;
  /** @default 10000 */
  readonly stopGraceMs?: number;
}

async function isOurs(pid: number, o: ProcessServiceOptions): Promise<boolean> {
  const argv = (await readFile(`/proc/${String(pid)}/cmdline`, 'utf8').catch(() => '')).split('\0');
  return (
    argv[0] !== undefined &&
    basename(argv[0]) === basename(o.binary) &&
    argv.some((a) => a.includes(o.root)) &&
    (await pidAlive(pid))
  );
}

export function createProcessService(o: ProcessServiceOptions): Services {
  if (!o.args.some((a) => a.includes(o.root)))
    throw new MoltError(
      ErrorCode.MachineInvalid,
      `lab service ${o.name}: one argument must name a path inside the machine root ${o.root}`,
      {
        hint: 'the lab firmware ends a boot’s services by that path (e.g. a --cert-dir under ephemeral/)',
      },
    );
  const run = join(o.root, 'run');
  const pidFile = join(run, `${o.name}.pid`);
  const logFile = join(run, `${o.name}.log`);
  const runningPid = async (): Promise<number | undefined> => {
    const pid = await readPidFile(pidFile);
    return pid !== undefined && (await isOurs(pid, o)) ? pid : undefined;
  };
  const started = async (pid: number): Promise<void> => {
    const deadline = performance.now() + (o.startTimeoutMs ?? 60_000);
    while (!(await accepts(`tcp://127.0.0.1:${String(o.port)}`))) {
      const why = !(await pidAlive(pid))
        ? 'exited at start'
        : performance.now() > deadline
          ? 'did not listen in time'
          : undefined;
      if (why !== undefined) {
        const tail = (await readFile(logFile, 'utf8').catch(() => '')).slice(-2000);
        throw new MoltError(
          ErrorCode.ServiceStartFailed,
          `${o.name} (PID ${String(pid)}) ${why}:\n${tail}`,
          {
            hint: `see ${logFile}`,
          },
        );
      }
      await sleep(100);
    }
  };
  return {
    async running() {
      return (await runningPid()) === undefined ? [] : [o.name];
    },
    async startAll() {
      if ((await runningPid()) !== undefined) return;
      await mkdir(run, { recursive: true });
      await started(await spawnDetached({ binary: o.binary, args: o.args, logFile, pidFile }));
    },
    async stopAll() {
      const pid = await runningPid();
      if (
        pid !== undefined &&
        signal(pid, 'SIGTERM') &&
        !(await waitGone(pid, o.stopGraceMs ?? 10_000))
      ) {
        signal(pid, 'SIGKILL');
        if (!(await waitGone(pid, 2_000)))
          throw new MoltError(
            ErrorCode.ServiceStopFailed,
            `${o.name} (PID ${String(pid)}) did not stop`,
          );
      }
      await removePidFile(pidFile);
    },
  };
}

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
