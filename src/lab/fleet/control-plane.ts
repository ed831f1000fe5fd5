// SPDX-License-Identifier: Apache-2.0
// Control-plane lab machines for end-to-end tests: N `molt lab machine --control-plane` processes
// whose agents run the members of one real etcd cluster (Debian etcd 3.4), plus what the tests
// look at from outside: the member list, each machine's etcd PID, linearizable reads per member.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Etcd3, type IMember } from 'etcd3';
import { stringify } from 'yaml';
import type { MachineConfigInput } from '../../protocol/machine-config.ts';
import { writePrivateFile } from '../../platform/fs/private-file.ts';
import { ErrorCode, MoltError } from '../../core/errors.ts';
import { eventually } from '../../platform/process/managed-process.ts';
import { waitReady, type ReadinessOptions } from '../../platform/process/readiness.ts';
import { startLabMachine, type FleetPki, type LabMachine } from './machine.ts';
import { loopbackNetwork, type LabNetwork, type MachineAddress } from './network.ts';

export interface ControlPlaneMachine extends LabMachine {
  readonly name: string;
  readonly clientUrl: string;
  /** The agent's API, at a fixed port across reboots (what an operator's fleet file names). */
  readonly apiUrl: string;
}

export interface ControlPlaneCluster {
  readonly machines: readonly ControlPlaneMachine[];
  /** Client URLs of all members. */
  readonly endpoints: readonly string[];
  /** Stop every machine by its supervisor PID (SIGTERM: the supervisor ends its agent and etcd). */
  stop(): Promise<void>;
}

export interface ControlPlaneClusterOptions {
  /** The argv that starts molt (`[node, …/bin/molt.js]`). */
  readonly molt: readonly string[];
  readonly dir: string;
  readonly pki: FleetPki;
  /** Installer image for the first install. */
  readonly image: string;
  readonly size?: number;
  /** TTL of the upgrade lease while its holder runs. @default 3 */
  readonly leaseTtlSeconds?: number;
  /** @default 20 */
  readonly healthDeadlineSeconds?: number;
  /** The machine config's `kubernetes` section for node `name` (lab machines as Kubernetes nodes). */
  readonly kubernetes?: (name: string) => MachineConfigInput['kubernetes'];
  /** The etcd binary the machines run. @default Debian's /usr/bin/etcd */
  readonly etcdBinary?: string;
  /** Each machine's output also goes to `<logDir>/<name>.log`. */
  readonly logDir?: string;
  /** More of machine `name`'s config (a hosted kube-apiserver), given its root and the etcd URLs. */
  readonly extra?: (m: {
    name: string;
    root: string;
    endpoints: readonly string[];
  }) => Partial<MachineConfigInput>;
  /** Where the machines live (network.ts). @default loopback */
  readonly network?: LabNetwork;
  /** How long machines that make no progress are waited for (readiness.ts). @default 60 s quiet */
  readonly readiness?: Pick<ReadinessOptions<unknown>, 'quietMs' | 'limitMs'>;
}

interface Planned {
  readonly name: string;
  readonly net: MachineAddress;
  readonly peer: string;
  readonly client: string;
  readonly api: number;
}

/** Each machine's address and ports, before any starts (every member must know all peers). */
async function plan(names: readonly string[], network: LabNetwork): Promise<Planned[]> {
  const planned: Planned[] = [];
  for (const name of names) {
    const net = await network.machine(name);
    const url = async (service: 'etcd-peer' | 'etcd-client'): Promise<string> =>
      `http://${net.address}:${String(await network.port(service))}`;
    planned.push({
      name,
      net,
      peer: await url('etcd-peer'),
      client: await url('etcd-client'),
      api: await network.port('api'),
    });
  }
  return planned;
}

/** Write member `p`'s machine config and start its machine. */
async function startMember(
  o: ControlPlaneClusterOptions,
  p: Planned,
  cluster: { initialCluster: string; endpoints: string[] },
): Promise<ControlPlaneMachine> {
  const { initialCluster, endpoints } = cluster;
  const config: MachineConfigInput = {
    node: p.name,
    role: 'control-plane',
    bootloader: 'grub',
    api: { host: p.net.address, port: p.api },
    healthDeadlineSeconds: o.healthDeadlineSeconds ?? 20,
    leaseTtlSeconds: o.leaseTtlSeconds ?? 3,
    rebootLeaseSeconds: 30,
    registry: { insecure: true },
    etcd: {
      name: p.name,
      peerUrl: p.peer,
      clientUrl: p.client,
      initialCluster,
      endpoints,
      ...(o.etcdBinary !== undefined && { binary: o.etcdBinary }),
    },
    ...(o.kubernetes !== undefined && { kubernetes: o.kubernetes(p.name) }),
    ...o.extra?.({ name: p.name, root: join(o.dir, p.name), endpoints }),
  };
  const configFile = join(o.dir, `${p.name}.yaml`);
  await writePrivateFile(configFile, stringify(config));
  const machine = startLabMachine({
    root: join(o.dir, p.name),
    bootloader: 'grub',
    pki: o.pki,
    image: o.image,
    molt: o.molt,
    controlPlane: true,
    configFile,
    name: p.name,
    exec: p.net.exec,
    ...(o.logDir !== undefined && { logFile: join(o.logDir, `${p.name}.log`) }),
  });
  return {
    ...machine,
    name: p.name,
    clientUrl: p.client,
    apiUrl: `https://${p.net.address}:${String(p.api)}`,
  };
}

/**
 * Start the machines and wait until every member serves linearizable reads; a cluster that does
 * not come up is stopped, and the error (MOLT_LAB_FAILED) names why, with each machine's last lines.
 */
export async function startControlPlaneCluster(
  o: ControlPlaneClusterOptions,
): Promise<ControlPlaneCluster> {
  const names = Array.from({ length: o.size ?? 3 }, (_, i) => `cp-${i + 1}`);
  const ports = await plan(names, o.network ?? loopbackNetwork());
  const initialCluster = ports.map((p) => `${p.name}=${p.peer}`).join(',');
  const endpoints = ports.map((p) => p.client);
  const machines: ControlPlaneMachine[] = [];
  const cluster = {
    machines,
    endpoints,
    stop: () => Promise.all(machines.map((m) => m.stop())).then(() => undefined),
  };
  try {
    for (const p of ports) machines.push(await startMember(o, p, { initialCluster, endpoints }));
    // Followed by the machines' progress, not a fixed deadline: on a busy machine three agents and
    // their etcd members can take minutes to form a cluster; a machine that exits ends the wait.
    await waitReady({
      what: 'the control-plane cluster',
      processes: machines.map((m) => m.process),
      probe: () => clusterHealthy(endpoints),
      intervalMs: 250,
      ...o.readiness,
    });
  } catch (e) {
    // etcd's own log (run/etcd.log) says why a member never served; read it before the stop.
    const etcdLogs = await Promise.all(
      machines.map((m) => readFile(join(m.root, 'run', 'etcd.log'), 'utf8').catch(() => '(none)')),
    );
    await cluster.stop();
    const logs = machines
      .map((m, i) => `  ${m.name} etcd.log:\n${(etcdLogs[i] ?? '').slice(-2000)}`)
      .join('\n');
    const said = (e as Error).message;
    // A member that failed to start (rather than the wait) still names what did not come up.
    const what = said.startsWith('the control-plane cluster did not come up')
      ? said
      : `the control-plane cluster did not come up: ${said}`;
    throw new MoltError(ErrorCode.LabFailed, `${what}\n${logs}`, { cause: e });
  }
  return cluster;
}

/** A linearizable read through `endpoint` alone (fails unless that member is connected to a quorum). */
export async function readThrough(
  endpoint: string,
  key: string,
  timeoutMs = 2_000,
): Promise<string | null> {
  const client = new Etcd3({ hosts: [endpoint], dialTimeout: 1_000 });
  try {
    return await client
      .get(key)
      .options({ deadline: Date.now() + timeoutMs })
      .string();
  } finally {
    client.close();
  }
}

/** Throws unless every member answers a linearizable read and all are started voters. */
async function clusterHealthy(endpoints: readonly string[]): Promise<void> {
  for (const e of endpoints) await readThrough(e, '/test/health');
  const members = await memberList(endpoints);
  const voters = members.filter((m) => m.name !== '' && !m.isLearner);
  if (voters.length !== endpoints.length)
    throw new Error(`${voters.length} started voters of ${members.length} members`);
}

/** Every member answers a linearizable read and the member list has `endpoints.length` started voters. */
export async function waitClusterHealthy(
  endpoints: readonly string[],
  timeoutMs = 30_000,
): Promise<void> {
  await eventually(() => clusterHealthy(endpoints), { timeoutMs, intervalMs: 250 });
}

/** The member list, after a linearizable read through the same client (3.4 answers it locally). */
export async function memberList(endpoints: readonly string[]): Promise<IMember[]> {
  const client = new Etcd3({ hosts: [...endpoints], dialTimeout: 1_000 });
  try {
    await client
      .get('/test/health')
      .options({ deadline: Date.now() + 2_000 })
      .exec();
    return (await client.cluster.memberList({}, { deadline: Date.now() + 2_000 })).members;
  } finally {
    client.close();
  }
}
