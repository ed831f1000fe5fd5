// SPDX-License-Identifier: Apache-2.0
// A lab fleet for operator tests: a real docker-registry holding releases, three control-plane
// lab machines whose agents run a real 3-member etcd cluster (also the operator's store), and N
// worker lab machines — every agent at a fixed port, as an operator's fleet file names them.
// With `controlPlane: false` (benchmarks of worker rollouts): no control-plane machines, and a
// single real etcd (testkit/etcd-process.ts) as the operator's store.
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { ErrorCode, errorMessage, MoltError } from '../../core/errors.ts';
import type { MachineConfigInput } from '../../protocol/machine-config.ts';
import { startEtcd, type EtcdCluster } from '../services/etcd.ts';
import { writePrivateFile } from '../../platform/fs/private-file.ts';
import { tempDir } from '../../platform/process/managed-process.ts';
import { startRegistry, type RunningRegistry } from '../services/registry.ts';
import { official, releaseFeed, type ReleaseFeed } from './release-feed.ts';
import { startControlPlaneCluster, type ControlPlaneCluster } from './control-plane.ts';
import { createFleetPki, startLabMachine, type FleetPki, type LabMachine } from './machine.ts';
import { loopbackNetwork, type LabNetwork } from './network.ts';

export { official, repository } from './release-feed.ts';

/** A lab machine as the fleet file lists it (what the operator's inventory records). */
export interface LabMachineRecord {
  readonly id: string;
  /** The agent's `https://host:port`. */
  readonly endpoint: string;
  readonly role: 'control-plane' | 'worker';
  readonly pool: string;
  /** The lab's control plane and workers are cluster `lab`; VMs are in none. */
  readonly cluster?: string;
  readonly labels: Readonly<Record<string, string>>;
}

export interface Worker extends LabMachine {
  readonly id: string;
  readonly endpoint: string;
}

export interface LabFleet {
  readonly dir: string;
  readonly registry: RunningRegistry;
  readonly pki: FleetPki;
  readonly cluster: ControlPlaneCluster;
  /** Client URLs of the etcd the operator's store and leader election use. */
  readonly storeEndpoints: readonly string[];
  readonly workers: readonly Worker[];
  /** Control-plane machines in pool `control-plane`, workers in pool `workers`, cluster `lab`. */
  readonly machines: readonly LabMachineRecord[];
  /** Every lab machine, control plane first. */
  readonly all: readonly LabMachine[];
  /**
   * Re-image worker `id` from scratch, as the lab's machine provider does: power it off, wipe its
   * root (slots, boot entries, journal, certificate), install `image` into slot A and boot it at the
   * same endpoint. Resolves once the new agent answers.
   */
  reimage(id: string, image: string): Promise<void>;
  /** Push `version` with `labels` (and `artifacts`, else small random ones); remembers its digest. */
  publish: ReleaseFeed['publish'];
  digest(version: string): string;
  image(version: string): string;
  stop(): Promise<void>;
}

interface WorkerSetup {
  readonly molt: readonly string[];
  readonly dir: string;
  readonly pki: FleetPki;
  readonly image: string;
  readonly kubernetes?: ((name: string) => MachineConfigInput['kubernetes']) | undefined;
  readonly logDir?: string | undefined;
  readonly network: LabNetwork;
}

async function startWorker(f: WorkerSetup, i: number, fixedPort?: number): Promise<Worker> {
  const id = `w-${String(i)}`;
  const net = await f.network.machine(id);
  const port = fixedPort ?? (await f.network.port('api'));
  const bootloader = i % 2 === 0 ? 'systemd-boot' : 'grub';
  const configFile = join(f.dir, `${id}.yaml`);
  const config: MachineConfigInput = {
    node: id,
    role: 'worker',
    bootloader,
    api: { host: net.address, port },
    healthDeadlineSeconds: 8,
    registry: { insecure: true },
    ...(f.kubernetes !== undefined && { kubernetes: f.kubernetes(id) }),
  };
  // May hold a registry password one day (registry.username/password): 0600 from creation.
  await writePrivateFile(configFile, stringify(config));
  const machine = startLabMachine({
    root: join(f.dir, id),
    bootloader,
    pki: f.pki,
    image: f.image,
    molt: f.molt,
    configFile,
    name: id,
    exec: net.exec,
    ...(f.logDir !== undefined && { logFile: join(f.logDir, `${id}.log`) }),
  });
  return { ...machine, id, endpoint: `https://${net.address}:${String(port)}` };
}

/** A fleet of workers only (`controlPlane: false`): its store is a single etcd, not on a machine. */
export interface WorkerFleet extends Omit<LabFleet, 'cluster'> {
  readonly cluster: undefined;
  readonly etcd: EtcdCluster;
}

export interface LabFleetOptions {
  /** The argv that starts molt (`[node, …/bin/molt.js]`): how the lab was started. */
  readonly molt: readonly string[];
  readonly workers: number;
  /** Start the three control-plane machines (their etcd cluster is the store). @default true */
  readonly controlPlane?: boolean;
  /** How many control-plane machines (etcd members). @default 3 */
  readonly controlPlaneSize?: number;
  /**
   * Lab machines as Kubernetes nodes: the machine config's `kubernetes` section for node `name`
   * (`cp-1…3`, `w-1…N`).
   */
  readonly kubernetes?: (name: string) => MachineConfigInput['kubernetes'];
  /** Keep everything in this directory (`molt lab`): kept at stop; default a temporary one. */
  readonly dir?: string;
  /** Machines' output also goes to `<logDir>/<name>.log`. */
  readonly logDir?: string;
  /**
   * Where the machines and the registry live (network.ts); the fleet does not remove it.
   * @default loopback
   */
  readonly network?: LabNetwork;
  /**
   * Release 1.0.0's artifacts and channels (a lab with VMs: the real OS release every machine
   * starts on, on the VMs' channel too). @default the lab's small random ones on `stable,beta`
   */
  readonly firstRelease?: {
    readonly artifacts: Readonly<Record<string, Uint8Array>>;
    readonly channels: string;
    /** Further release labels (the kubelet a VM release carries). */
    readonly labels?: Readonly<Record<string, string>>;
  };
}

function records(
  cluster: ControlPlaneCluster | undefined,
  workers: readonly Worker[],
): LabMachineRecord[] {
  const common = { cluster: 'lab', labels: {} };
  return [
    ...(cluster?.machines ?? []).map((m) => ({
      ...common,
      id: m.name,
      endpoint: m.apiUrl,
      role: 'control-plane' as const,
      pool: 'control-plane',
    })),
    ...workers.map((w) => ({
      ...common,
      id: w.id,
      endpoint: w.endpoint,
      role: 'worker' as const,
      pool: 'workers',
    })),
  ];
}

/** Start `count` workers into `into` (so a failure still stops those started); wait for each agent. */
async function startWorkers(setup: WorkerSetup, count: number, into: Worker[]): Promise<void> {
  for (let i = 1; i <= count; i++) into.push(await startWorker(setup, i));
  await Promise.all(into.map((w) => w.status()));
}

interface Store {
  cluster?: ControlPlaneCluster;
  etcd?: EtcdCluster;
}

const labFailed = (what: string, e: unknown): MoltError =>
  new MoltError(ErrorCode.LabFailed, `${what}: ${errorMessage(e)}`, {
    cause: e,
  });

/** The operator's store: the control-plane machines' etcd cluster, or a single etcd. */
async function startStore(o: LabFleetOptions, setup: WorkerSetup, into: Store): Promise<void> {
  if (o.controlPlane === false) {
    into.etcd = await startEtcd().catch((e: unknown) => {
      throw labFailed(`the operator's store (etcd) did not come up`, e);
    });
    return;
  }
  into.cluster = await startControlPlaneCluster({
    dir: setup.dir,
    molt: setup.molt,
    pki: setup.pki,
    image: setup.image,
    ...(o.controlPlaneSize !== undefined && { size: o.controlPlaneSize }),
    ...(o.kubernetes !== undefined && { kubernetes: o.kubernetes }),
    ...(o.logDir !== undefined && { logDir: o.logDir }),
    network: setup.network,
  });
}

/** Release 1.0.0: the lab's small random one on `stable,beta`, or `first`. */
async function publishFirst(
  feed: ReleaseFeed,
  first: LabFleetOptions['firstRelease'],
): Promise<void> {
  const channels = first?.channels ?? 'stable,beta';
  const labels = { ...official, ...first?.labels, 'dev.molt.channels': channels };
  await feed.publish('1.0.0', labels, first?.artifacts);
}

/**
 * Start the fleet on release 1.0.0 (published to `stable` and `beta`). Workers boot in parallel;
 * resolves once every agent answers.
 */
export async function startLabFleet(
  o: LabFleetOptions & { readonly controlPlane?: true },
): Promise<LabFleet>;
export async function startLabFleet(
  o: LabFleetOptions & { readonly controlPlane: false },
): Promise<WorkerFleet>;
export async function startLabFleet(o: LabFleetOptions): Promise<LabFleet | WorkerFleet> {
  const network = o.network ?? loopbackNetwork();
  const registry = await startRegistry({ host: network.hostAddress });
  const scratch =
    o.dir === undefined
      ? await tempDir('operator-fleet')
      : { path: o.dir, remove: () => Promise.resolve() };
  const feed = releaseFeed(registry);
  const { image, publish } = feed;
  const store: Store = {};
  const workers: Worker[] = [];
  const stop = async (): Promise<void> => {
    for (const w of workers) await w.stop();
    await store.cluster?.stop();
    await store.etcd?.stop();
    await registry.stop();
    await scratch.remove();
  };
  let setup: WorkerSetup;
  // A fleet that does not come up is stopped here: nothing it started outlives the failure.
  try {
    await publishFirst(feed, o.firstRelease);
    const pki = await createFleetPki(join(scratch.path, 'pki'));
    setup = {
      molt: o.molt,
      dir: scratch.path,
      pki,
      image: image('1.0.0'),
      kubernetes: o.kubernetes,
      logDir: o.logDir,
      network,
    };
    await startStore(o, setup, store);
    await startWorkers(setup, o.workers, workers);
  } catch (e) {
    // The failure, not a later one of the stop, is what the caller hears.
    await stop().catch(() => undefined);
    throw e;
  }
  const { cluster, etcd } = store;
  const all = [...(cluster?.machines ?? []), ...workers];
  const reimage = async (id: string, with_: string): Promise<void> => {
    const i = workers.findIndex((w) => w.id === id);
    const old = workers[i];
    if (old === undefined) throw new Error(`no worker ${id}`);
    await old.stop();
    await rm(old.root, { recursive: true, force: true });
    const fresh = await startWorker(
      { ...setup, image: with_ },
      Number(id.slice(2)),
      Number(new URL(old.endpoint).port),
    );
    workers[i] = fresh;
    all[all.indexOf(old)] = fresh;
    await fresh.status();
  };
  const common = {
    dir: scratch.path,
    registry,
    pki: setup.pki,
    storeEndpoints: cluster?.endpoints ?? etcd?.endpoints ?? [],
    workers,
    machines: records(cluster, workers),
    all,
    reimage,
    publish,
    digest: feed.digest,
    image,
    stop,
  };
  if (cluster !== undefined) return { ...common, cluster };
  if (etcd === undefined) throw new Error('unreachable: a fleet has a control plane or an etcd');
  return { ...common, cluster: undefined, etcd };
}
