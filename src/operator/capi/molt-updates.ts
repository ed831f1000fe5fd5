// SPDX-License-Identifier: Apache-2.0
/**
 * molt's in-place updates of Cluster API Machines (docs/adr/0014 decisions 2–4), over the
 * operator's store, its release discovery, what it last saw of each agent and its own read of the
 * management cluster: a Machine a hook names is read there (`CapiMachines.get`) and is molt
 * machine `id` only when that object maps to `id` (annotation `molt.dev/machine` or providerID
 * `molt://<id>`) and its Cluster (`<namespace>/<clusterName>`) is mapped by `capi.clusters` to the
 * machine's pool (`core/capi/machine-map.ts`) — the request's own labels, annotations and cluster
 * are never read. A MachineSet is molt's when each of its Machines, read the same way, is; the
 * release for it is checked against those Machines' pools and releases only. `update` records the
 * machine's targeted rollout once (`decide/capi-update.ts`) and answers from where it is; the
 * reconcile loop moves the machine under the pool's policies.
 */
import type { Release } from '../../core/releases/release.ts';
import type { Pool } from '../../core/rollout/types.ts';
import { capiUpdate, releaseCarrying } from '../decide/capi-update.ts';
import { booted, type Observation } from '../decide/observation.ts';
import { mapMachine, type ClusterPools } from '../../core/capi/machine-map.ts';
import type { CapiMachines } from '../ports/capi-machines.ts';
import type {
  CapiMachineRef,
  InPlaceUpdateState,
  InPlaceUpdates,
  Managed,
  ManagedMachine,
  Resolution,
} from '../ports/in-place-updates.ts';
import type { OperatorStore } from '../ports/store.ts';
import { createRecorded } from '../transitions/rollout-created.ts';
import type { ReleaseFor } from './answers.ts';

export interface MoltUpdatesDeps {
  readonly store: OperatorStore;
  /** Discovered releases, newest first (the operator's cached source). */
  readonly releases: () => Promise<readonly Release[]>;
  /** The pools in force (live: declared pools change). */
  readonly pools: () => readonly Pool[];
  /** `capi.clusters`: each Cluster (`<namespace>/<name>`) → the molt pools its Machines may be in. */
  readonly clusters: ClusterPools;
  /** The management cluster's Machines, read to know which Machines a request names. */
  readonly machines: Pick<CapiMachines, 'get' | 'ofMachineSet'>;
  /** What the operator last saw of a machine's agent. */
  readonly observed: (machine: string) => Observation | undefined;
  /** The operator requires verified release signatures (as discovery does). */
  readonly requireSignature?: boolean | undefined;
  readonly now: () => number;
  readonly log?: (line: string) => void;
}

/**
 * A MachineSet is molt's when every Machine it owns, as molt reads them, is a molt machine by
 * {@link mapMachine}: then the set's pools are those Machines' pools — not every pool its Cluster
 * maps (a Cluster's control plane or a replace pool would decide for a MachineDeployment's
 * workers). A set with no Machine molt manages, or one it does not, is refused (CAPI replaces).
 */
async function resolveSet(d: MoltUpdatesDeps, ref: CapiMachineRef): Promise<Resolution> {
  const at = `${ref.kind} ${ref.namespace}/${ref.name}`;
  const [read, stored] = await Promise.all([
    d.machines.ofMachineSet(ref.namespace, ref.name),
    d.store.read(),
  ]);
  if (read.length === 0) return { refused: `${at} has no Machines on the management cluster` };
  const mapped: { machine: string; pool: string }[] = [];
  for (const m of read) {
    const r = mapMachine(m, stored.machines, d.clusters);
    if ('refused' in r) return { refused: `${at}: ${r.refused}` };
    mapped.push(r);
  }
  return {
    managed: {
      kind: 'MachineSet',
      namespace: ref.namespace,
      name: ref.name,
      clusterName: ref.clusterName,
      pools: [...new Set(mapped.map((m) => m.pool))],
      machines: mapped.map((m) => m.machine),
    },
  };
}

/** The Machine a request points at, as molt reads it, mapped; a MachineSet by its Machines. */
async function resolve(d: MoltUpdatesDeps, ref: CapiMachineRef): Promise<Resolution> {
  if (ref.kind === 'MachineSet') return resolveSet(d, ref);
  const at = `${ref.kind} ${ref.namespace}/${ref.name}`;
  const [read, stored] = await Promise.all([
    d.machines.get(ref.namespace, ref.name),
    d.store.read(),
  ]);
  const m = mapMachine(read, stored.machines, d.clusters);
  if (read === undefined || 'refused' in m)
    return { refused: `${at}: ${'refused' in m ? m.refused : ''}` };
  return {
    managed: {
      kind: 'Machine',
      namespace: read.namespace,
      name: read.name,
      machine: m.machine,
      pool: m.pool,
      controlPlane: read.controlPlane,
      version: read.version,
      uid: read.uid,
    },
  };
}

const poolsOf = (m: Managed): readonly string[] => (m.kind === 'Machine' ? [m.pool] : m.pools);

export function moltUpdates(d: MoltUpdatesDeps): InPlaceUpdates & { releaseFor: ReleaseFor } {
  return {
    resolve: (ref) => resolve(d, ref),
    /** A MachineSet's Machines may be in several pools: each must carry the version. */
    async releaseFor(version, managed) {
      const [releases, stored] = await Promise.all([d.releases(), d.store.read()]);
      const moving = new Set(managed.kind === 'Machine' ? [managed.machine] : managed.machines);
      const carried = poolsOf(managed).map((name) => {
        const pool = d.pools().find((p) => p.name === name);
        if (pool === undefined) return undefined;
        const from = stored.machines
          .filter((m) => moving.has(m.id) && m.pool === name)
          .map((m) => running(d, m.id));
        const found = releaseCarrying(version, pool, releases, {
          blocks: stored.blocks,
          requireSignature: d.requireSignature,
          from,
        });
        return 'release' in found ? found.release.version : undefined;
      });
      return carried.every((r) => r !== undefined) ? carried[0] : undefined;
    },
    async update(managed, version): Promise<InPlaceUpdateState> {
      const [stored, releases] = await Promise.all([d.store.read(), d.releases()]);
      // Moved to another pool since it was resolved: no longer what its Cluster maps to.
      const machine = stored.machines.find(
        (m) => m.id === managed.machine && m.pool === managed.pool,
      );
      const status = machine === undefined ? undefined : d.observed(machine.id)?.status;
      const out = capiUpdate({
        machine,
        version,
        pool: d.pools().find((p) => p.name === machine?.pool),
        releases,
        rollouts: stored.rollouts,
        blocks: stored.blocks,
        booted: status === undefined ? undefined : booted(status).digest,
        bootedVersion: status === undefined ? undefined : booted(status).version,
        requireSignature: d.requireSignature,
        now: d.now(),
      });
      if (out.create !== undefined) await create(d, out.create, managed);
      return out.answer;
    },
  };
}

/** What a machine's agent last reported booting (nothing known when it has not answered). */
function running(d: MoltUpdatesDeps, machine: string): { digest?: string; version?: string } {
  const status = d.observed(machine)?.status;
  return status === undefined ? {} : booted(status);
}

async function create(
  d: MoltUpdatesDeps,
  r: NonNullable<ReturnType<typeof capiUpdate>['create']>,
  ref: ManagedMachine,
): Promise<void> {
  const message = `rollout ${r.id}: Cluster API updates ${ref.namespace}/${ref.name} in place to ${r.target.version}`;
  // CAPI may ask twice at once: the second finds the rollout there.
  await createRecorded(
    { store: d.store, now: d.now, ...(d.log !== undefined && { log: d.log }) },
    r,
    {
      message,
      data: { target: r.target, only: r.only, by: `capi:${ref.namespace}/${ref.name}` },
      ifAbsent: true,
    },
  );
}
