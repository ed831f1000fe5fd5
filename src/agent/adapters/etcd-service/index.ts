// SPDX-License-Identifier: Apache-2.0
/**
 * The etcd service (docs/adr/0004 §5): the `etcd` binary (Debian's, or the one the config names)
 * as a detached child with its PID in `<root>/run/etcd.pid` and its output appended to
 * `<root>/run/etcd.log`. Detached, so an agent restart in the same boot (systemd `Restart=`) keeps
 * the member running; the PID file lets the next agent find it. Both calls are level-triggered: a
 * running etcd is kept, a stopped one stays stopped.
 *
 * Joining: when `<dataDir>.join.json` exists (written by the etcd member adapter after `member
 * add`, see ../etcd/join-spec.ts), etcd starts with its `initialCluster` and
 * `--initial-cluster-state=existing`; otherwise with `initialCluster` and `new`.
 *
 * Disabled (`<root>/state/etcd.disabled`, like `systemctl disable`): set by the member adapter
 * when this member leaves the cluster, so a plain StartServices (after a boot, an abort, a
 * rollback) does not start a removed member — its data dir, or an empty one bootstrapping the
 * old member id, makes etcd exit at once. Only a rejoin as a new member enables it again. The
 * marker lives in STATE because `preserve: false` wipes EPHEMERAL between leave and rejoin.
 */
import { access, mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ErrorCode, MoltError } from '../../../core/errors.ts';
import type { Services } from '../../ports/services.ts';
import { readJoinSpec } from '../etcd/join-spec.ts';
import { etcdEnv } from '../../../platform/etcd/process-env.ts';
import { waitListening } from './start.ts';
import {
  isEtcdProcess,
  readPidFile,
  removePidFile,
  signal,
  waitGone,
  spawnDetached,
} from '../process-service/pid.ts';

/** Options for {@link createEtcdService}. */
export interface EtcdServiceOptions {
  /** The machine root; PID file and log go to `<root>/run/`. */
  readonly root: string;
  readonly name: string;
  readonly peerUrl: string;
  readonly clientUrl: string;
  /** `name=peerUrl,…` of the cluster this member bootstraps with (ignored once it has data). */
  readonly initialCluster: string;
  readonly dataDir: string;
  /** @default 'molt-lab' */
  readonly clusterToken?: string;
  /** @default '/usr/bin/etcd' */
  readonly binary?: string | undefined;
  /** Raft heartbeat in ms. @default 100 */
  readonly heartbeatMs?: number;
  /** Raft election timeout in ms. @default 1000 */
  readonly electionTimeoutMs?: number;
  /** Time between SIGTERM and SIGKILL. @default 10000 */
  readonly stopGraceMs?: number;
  /** Time a SIGKILLed etcd may take to disappear before the stop fails. @default 2000 */
  readonly killWaitMs?: number;
  /** Time etcd may take to listen on its ports. @default 15000 */
  readonly startTimeoutMs?: number;
}

/** The etcd service: {@link Services} plus disabling it while the member is out of the cluster. */
export interface EtcdService extends Services {
  /** `startAll` does nothing until {@link enable} (this member left the cluster). */
  disable(): Promise<void>;
  enable(): Promise<void>;
}

/** etcd as the agent's {@link Services}; `running()` lists `'etcd'` while it runs. */
export function createEtcdService(options: EtcdServiceOptions): EtcdService {
  const binary = options.binary ?? '/usr/bin/etcd';
  const pidFile = join(options.root, 'run', 'etcd.pid');
  const disabled = join(options.root, 'state', 'etcd.disabled');
  const runningPid = async (): Promise<number | undefined> => {
    const pid = await readPidFile(pidFile);
    return pid !== undefined && (await isEtcdProcess(pid, binary, options.dataDir))
      ? pid
      : undefined;
  };
  return {
    async running() {
      return (await runningPid()) === undefined ? [] : ['etcd'];
    },
    async disable() {
      await mkdir(join(options.root, 'state'), { recursive: true });
      await writeFile(disabled, '');
    },
    async enable() {
      await rm(disabled, { force: true });
    },
    async startAll() {
      if ((await runningPid()) !== undefined) return;
      if (
        await access(disabled).then(
          () => true,
          () => false,
        )
      )
        return;
      const args = await etcdArgs(options);
      await mkdir(join(options.root, 'run'), { recursive: true });
      const logFile = join(options.root, 'run', 'etcd.log');
      const pid = await spawnDetached({ binary, args, logFile, pidFile, env: etcdEnv() });
      await waitListening({ pid, options, log: logFile });
    },
    async stopAll() {
      const pid = await runningPid();
      if (pid !== undefined) await stopPid(pid, options);
      await removePidFile(pidFile);
    },
  };
}

async function stopPid(pid: number, options: EtcdServiceOptions): Promise<void> {
  if (!signal(pid, 'SIGTERM')) return;
  if (await waitGone(pid, options.stopGraceMs ?? 10_000)) return;
  signal(pid, 'SIGKILL');
  if (await waitGone(pid, options.killWaitMs ?? 2_000)) return;
  throw new MoltError(
    ErrorCode.ServiceStopFailed,
    `etcd (PID ${pid}) did not stop after SIGTERM and SIGKILL`,
    {
      hint: `check the process state in /proc/${pid}/status (uninterruptible I/O, a frozen cgroup)`,
    },
  );
}

/** etcd's flags for `o` (the join spec's cluster when this member joins one). */
export async function etcdArgs(o: EtcdServiceOptions): Promise<string[]> {
  const join = await readJoinSpec(o.dataDir);
  return [
    `--name=${o.name}`,
    `--data-dir=${o.dataDir}`,
    `--listen-client-urls=${o.clientUrl}`,
    `--advertise-client-urls=${o.clientUrl}`,
    `--listen-peer-urls=${o.peerUrl}`,
    `--initial-advertise-peer-urls=${o.peerUrl}`,
    `--initial-cluster=${join?.initialCluster ?? o.initialCluster}`,
    `--initial-cluster-state=${join === undefined ? 'new' : 'existing'}`,
    `--initial-cluster-token=${o.clusterToken ?? 'molt-lab'}`,
    `--heartbeat-interval=${o.heartbeatMs ?? 100}`,
    `--election-timeout=${o.electionTimeoutMs ?? 1000}`,
    '--logger=zap',
    '--log-outputs=stderr',
  ];
}
