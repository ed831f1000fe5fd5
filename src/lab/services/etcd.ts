// SPDX-License-Identifier: Apache-2.0
/**
 * A real etcd (Debian `etcd-server` 3.4.23) for integration tests: one member or an N-member
 * cluster on 127.0.0.1 with free ports and temp data dirs, stopped by the PIDs this harness started.
 * Single members can be stopped and restarted to exercise quorum loss.
 */
import { handleType, retry } from 'cockatiel';
import { join } from 'node:path';
import { freePort } from '../../platform/process/free-port.ts';
import {
  eventually,
  startProcess,
  tempDir,
  type ManagedProcess,
} from '../../platform/process/managed-process.ts';
import { etcdEnv } from '../../platform/etcd/process-env.ts';

/** Options for {@link startEtcdCluster}. */
export interface EtcdClusterOptions {
  /** Number of members. @default 1 */
  readonly members?: number;
  /** The etcd binary. @default '/usr/bin/etcd' */
  readonly binary?: string;
  /** Raft heartbeat; short on loopback so elections and quorum tests take well under a second. @default 50 */
  readonly heartbeatMs?: number;
  /** Raft election timeout. @default 500 */
  readonly electionTimeoutMs?: number;
  /** How long to wait for the cluster to become healthy. @default 20000 */
  readonly startTimeoutMs?: number;
}

/** One etcd member; its process can be stopped and started again on the same data dir and ports. */
export interface EtcdMember {
  readonly name: string;
  readonly clientUrl: string;
  readonly peerUrl: string;
  readonly dataDir: string;
  /** PID of the running process, or undefined while stopped. */
  readonly pid: number | undefined;
  /** Output of the current (or last) process, for diagnostics. */
  output(): string;
  /** Stop this member by its PID: SIGTERM, then SIGKILL after `graceMs` (0 = a crash). */
  stop(graceMs?: number): Promise<void>;
  /** Start this member again; resolves once it serves HTTP (it may not have a leader yet). */
  start(): Promise<void>;
}

/** A running etcd cluster. */
export interface EtcdCluster {
  /** Client URLs of all members (`http://127.0.0.1:<port>`), for `new Etcd3({ hosts })`. */
  readonly endpoints: readonly string[];
  readonly members: readonly EtcdMember[];
  /** Resolves when every running member reports `/health` true (i.e. a leader and a quorum). */
  waitHealthy(timeoutMs?: number): Promise<void>;
  /** Stop every member and remove the data dirs. */
  stop(): Promise<void>;
}

interface MemberSpec {
  readonly name: string;
  readonly clientPort: number;
  readonly peerPort: number;
  readonly dataDir: string;
  /** Shared by all members of one cluster; a distinct token keeps parallel clusters apart. */
  readonly token: string;
}

const url = (port: number): string => `http://127.0.0.1:${port}`;

/** Start a single-member etcd; shorthand for `startEtcdCluster({ members: 1 })`. */
export function startEtcd(options: Omit<EtcdClusterOptions, 'members'> = {}): Promise<EtcdCluster> {
  return startEtcdCluster({ ...options, members: 1 });
}

/** A member could not bind a port freePort() found: another process took it first. */
class PortInUseError extends Error {}

/**
 * Start an etcd cluster of `members` members and wait until it is healthy. Ports come from
 * {@link freePort}, which can race with another process; a start that fails on a bound port is
 * retried with new ports (twice) instead of failing the test run.
 */
export async function startEtcdCluster(options: EtcdClusterOptions = {}): Promise<EtcdCluster> {
  return retry(handleType(PortInUseError), { maxAttempts: 2 }).execute(async () => {
    const dir = await tempDir('etcd');
    try {
      const cluster = await launch(dir.path, options);
      return { ...cluster, stop: () => stopAll(cluster.members).finally(() => dir.remove()) };
    } catch (e) {
      await dir.remove();
      throw e;
    }
  });
}

async function launch(
  root: string,
  options: EtcdClusterOptions,
): Promise<Omit<EtcdCluster, 'stop'>> {
  const count = options.members ?? 1;
  const specs: MemberSpec[] = [];
  for (let i = 0; i < count; i++) {
    specs.push({
      name: `m${i}`,
      clientPort: await freePort(),
      peerPort: await freePort(),
      dataDir: join(root, `m${i}`),
      token: root,
    });
  }
  const initialCluster = specs.map((s) => `${s.name}=${url(s.peerPort)}`).join(',');
  const members = specs.map((s) =>
    createMember(s, etcdArgs(s, initialCluster, options), options.binary),
  );
  const waitHealthy = (timeoutMs = options.startTimeoutMs ?? 20_000): Promise<void> =>
    waitAllHealthy(members, timeoutMs);
  try {
    await Promise.all(members.map((m) => m.start()));
    await waitHealthy();
  } catch (e) {
    const inUse = members.some((m) => m.output().includes('address already in use'));
    await stopAll(members);
    throw inUse ? new PortInUseError('etcd: a port was taken', { cause: e }) : e;
  }
  return { endpoints: members.map((m) => m.clientUrl), members, waitHealthy };
}

function etcdArgs(s: MemberSpec, initialCluster: string, options: EtcdClusterOptions): string[] {
  return [
    `--name=${s.name}`,
    `--data-dir=${s.dataDir}`,
    `--listen-client-urls=${url(s.clientPort)}`,
    `--advertise-client-urls=${url(s.clientPort)}`,
    `--listen-peer-urls=${url(s.peerPort)}`,
    `--initial-advertise-peer-urls=${url(s.peerPort)}`,
    `--initial-cluster=${initialCluster}`,
    '--initial-cluster-state=new',
    `--initial-cluster-token=molt-test-${s.token}`,
    `--heartbeat-interval=${options.heartbeatMs ?? 50}`,
    `--election-timeout=${options.electionTimeoutMs ?? 500}`,
    '--logger=zap',
    '--log-outputs=stderr',
  ];
}

function createMember(
  spec: MemberSpec,
  args: readonly string[],
  binary = '/usr/bin/etcd',
): EtcdMember {
  let proc: ManagedProcess | undefined;
  let lastOutput = '';
  const clientUrl = url(spec.clientPort);
  return {
    name: spec.name,
    clientUrl,
    peerUrl: url(spec.peerPort),
    dataDir: spec.dataDir,
    get pid() {
      return proc?.pid;
    },
    output: () => proc?.output() ?? lastOutput,
    async stop(graceMs = 5_000) {
      if (proc === undefined) return;
      const p = proc;
      await p.stop(graceMs);
      lastOutput = p.output();
      proc = undefined;
    },
    async start() {
      if (proc !== undefined) return;
      const p = startProcess(`etcd ${spec.name}`, binary, args, { env: etcdEnv() });
      proc = p;
      await eventually(
        async () => {
          if (p.pid < 0 || (await isExited(p)))
            throw new Error(`etcd ${spec.name} exited:\n${p.output().slice(-4000)}`);
          await httpGet(`${clientUrl}/version`);
        },
        { timeoutMs: 15_000, intervalMs: 50 },
      ).catch(async (e: unknown) => {
        await p.stop(0);
        throw e;
      });
    },
  };
}

/** True when the process has already exited (checked without waiting). */
async function isExited(p: ManagedProcess): Promise<boolean> {
  const marker = Symbol('running');
  return (await Promise.race([p.exited, Promise.resolve(marker)])) !== marker;
}

async function httpGet(target: string): Promise<string> {
  const res = await fetch(target, { signal: AbortSignal.timeout(1_000) });
  const body = await res.text();
  if (!res.ok) throw new Error(`GET ${target}: ${res.status} ${body}`);
  return body;
}

async function waitAllHealthy(members: readonly EtcdMember[], timeoutMs: number): Promise<void> {
  await eventually(
    async () => {
      for (const m of members) {
        if (m.pid === undefined) continue;
        const body = await httpGet(`${m.clientUrl}/health`);
        if (!body.includes('"true"')) throw new Error(`etcd ${m.name} not healthy: ${body}`);
      }
    },
    { timeoutMs, intervalMs: 50 },
  );
}

/**
 * Stop members one at a time. Stopping all at once makes a SIGTERM'd leader try to hand over
 * leadership to peers that are also shutting down, which stalls each member until SIGKILL.
 */
async function stopAll(members: readonly EtcdMember[]): Promise<void> {
  for (const m of members) await m.stop();
}
