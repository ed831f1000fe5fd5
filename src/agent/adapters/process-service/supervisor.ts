// SPDX-License-Identifier: Apache-2.0
/**
 * {@link ComponentSupervisor} under the lab firmware: each component a detached process, found
 * again by a restarted agent, as etcd is run (etcd-service). Per component `<root>/run/<name>.pid`
 * (its PID), `<root>/run/<name>.log` (its output, appended across restarts, a marker line before
 * each start) and `<root>/run/<name>.hash` (the spec it was started on). `run/` is the lab's
 * `/run`: the firmware empties it at every boot, as it ends every process whose binary or an
 * argument lies in the machine root — so a spec must name a path there (a staged bundle's binary
 * does; an initial one needs e.g. a `--cert-dir` under `ephemeral/`).
 *
 * Restart on exit, as the systemd units' `Restart=always` / `RestartSec=5` on real machines: a
 * component that dies by itself (kube-scheduler and kube-controller-manager exit when they lose
 * their leader lease, as they do on a loaded machine) is started again on the same spec by a check
 * every `restartAfterMs` while this agent runs. A component the agent stopped stays stopped: only
 * what `run` started and no `stop` ended is kept. run, stop and the check go one at a time, so a
 * stop's SIGTERM is never mistaken for a death.
 */
import { appendFile, mkdir, readFile, rm, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { ErrorCode, MoltError } from '../../../core/errors.ts';
import type { ComponentSpec } from '../../../core/kubernetes/render.ts';
import type { ComponentState, ComponentSupervisor } from '../../ports/control-plane.ts';
import { tailOf } from '../../../platform/fs/tail.ts';
import { writeFileAtomic } from '../fs/atomic-write.ts';
import { pidAlive, readPidFile, removePidFile, signal, spawnDetached, waitGone } from './pid.ts';

export interface ProcessSupervisorOptions {
  readonly root: string;
  /** How long a component may take to stop after SIGTERM before SIGKILL. @default 10000 */
  readonly stopGraceMs?: number;
  /** How often a component that exited by itself is started again; `false`: never. @default 5000 */
  readonly restartAfterMs?: number | false;
}

/** The line written to the log before each start; the tail of a failure starts after the last. */
export const startMarker = '--- molt: starting ';

const inRoot = (root: string, arg: string): boolean =>
  arg === root || arg.startsWith(`${root}/`) || arg.includes(`=${root}/`);

export function createProcessSupervisor(o: ProcessSupervisorOptions): ComponentSupervisor {
  const run = join(o.root, 'run');
  const file = (name: string, ext: 'pid' | 'log' | 'hash'): string => join(run, `${name}.${ext}`);
  /** The PID of `name` when /proc shows our binary of that name with the machine root in it. */
  const runningPid = async (name: string): Promise<number | undefined> => {
    const pid = await readPidFile(file(name, 'pid'));
    if (pid === undefined) return undefined;
    const argv = (await readFile(`/proc/${String(pid)}/cmdline`, 'utf8').catch(() => '')).split(
      '\0',
    );
    const ours =
      argv[0] !== undefined &&
      basename(argv[0]) === name &&
      argv.some((a) => inRoot(o.root, a)) &&
      (await pidAlive(pid));
    return ours ? pid : undefined;
  };
  const stop = async (name: string): Promise<void> => {
    const pid = await runningPid(name);
    if (
      pid !== undefined &&
      signal(pid, 'SIGTERM') &&
      !(await waitGone(pid, o.stopGraceMs ?? 10_000))
    ) {
      signal(pid, 'SIGKILL');
      if (!(await waitGone(pid, 2_000)))
        throw new MoltError(
          ErrorCode.ServiceStopFailed,
          `${name} (PID ${String(pid)}) did not stop`,
        );
    }
    await removePidFile(file(name, 'pid'));
    await rm(file(name, 'hash'), { force: true });
  };
  const state = async (name: string): Promise<ComponentState> => {
    const pid = await runningPid(name);
    if (pid === undefined) return { running: false };
    const since = await stat(file(name, 'pid')).then((s) => s.mtime.toISOString());
    const hash = (await readFile(file(name, 'hash'), 'utf8').catch(() => '')).trim();
    return { running: true, pid, since, ...(hash !== '' && { hash }) };
  };
  const start = async (spec: ComponentSpec, why: string): Promise<void> => {
    await mkdir(run, { recursive: true });
    const log = file(spec.name, 'log');
    await appendFile(
      log,
      `${startMarker}${spec.name} ${spec.hash.slice(0, 12)} at ${new Date().toISOString()}${why}\n`,
    );
    await spawnDetached({
      binary: spec.binary,
      args: spec.args,
      logFile: log,
      pidFile: file(spec.name, 'pid'),
      env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', ...spec.env },
    });
    await writeFileAtomic(file(spec.name, 'hash'), `${spec.hash}\n`);
  };
  /** What `run` started and no `stop` ended: the components kept running. */
  const kept = new Map<string, ComponentSpec>();
  let queue: Promise<unknown> = Promise.resolve();
  const serially = <T>(f: () => Promise<T>): Promise<T> => {
    const next = queue.then(f, f);
    queue = next.catch(() => undefined);
    return next;
  };
  const restartExited = (): Promise<void> =>
    serially(async () => {
      for (const spec of kept.values())
        if (!(await state(spec.name)).running) await start(spec, ' (restarted: it exited)');
    }).catch(() => undefined); // a failed restart is tried again at the next check
  let keeper: NodeJS.Timeout | undefined;
  const keep = (spec: ComponentSpec): void => {
    kept.set(spec.name, spec);
    if (keeper !== undefined || o.restartAfterMs === false) return;
    keeper = setInterval(() => void restartExited(), o.restartAfterMs ?? 5_000);
    keeper.unref(); // the agent's lifetime, not a reason to keep it alive
  };
  return {
    state,
    stop: (name) =>
      serially(async () => {
        kept.delete(name);
        await stop(name);
      }),
    run: (spec: ComponentSpec) =>
      serially(async () => {
        if (![spec.binary, ...spec.args].some((a) => inRoot(o.root, a)))
          throw new MoltError(
            ErrorCode.MachineInvalid,
            `lab component ${spec.name}: its binary or one argument must name a path inside the machine root ${o.root}`,
            {
              hint: 'the lab firmware ends a boot’s processes by that path (e.g. a --cert-dir under ephemeral/)',
            },
          );
        const now = await state(spec.name);
        keep(spec);
        if (now.running && now.hash === spec.hash) return;
        if (now.running) await stop(spec.name);
        await start(spec, '');
      }),
    async logTail(name, lines) {
      const text = await tailOf(file(name, 'log'), 256 * 1024);
      const since = text.lastIndexOf(startMarker);
      const last = since < 0 ? text : text.slice(text.indexOf('\n', since) + 1);
      return last.trimEnd().split('\n').slice(-lines).join('\n');
    },
  };
}
