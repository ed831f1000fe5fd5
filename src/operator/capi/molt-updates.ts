// SPDX-License-Identifier: Apache-2.0
/**
 * molt's in-place updates of Cluster API Machines (docs/adr/0014 decisions 2–4), over the
 * operator's store, its release discovery and what it last saw of each agent: a Machine is the
 * molt machine its annotation `molt.dev/machine` names (a Machine of any infrastructure provider
 * whose machine runs molt), else its `spec.providerID` (`molt://<id>`), else the one named like it; a
 * MachineSet is molt's when its Cluster is mapped to a pool (`capi.clusters` in the operator
 * config). `update` records the machine's targeted rollout once (`decide/capi-update.ts`) and
 * answers from where it is; the reconcile loop moves the machine under the pool's policies.
 */
import type { Release } from '../../core/releases/release.ts';
import type { Pool } from '../../core/rollout/types.ts';
import { capiUpdate, releaseCarrying } from '../decide/capi-update.ts';
import { booted, type Observation } from '../decide/observation.ts';
import type {
  CapiMachineRef,
  InPlaceUpdateState,
  InPlaceUpdates,
} from '../ports/in-place-updates.ts';
import type { MachineRecord, OperatorStore } from '../ports/store.ts';
import { createRecorded } from '../transitions/rollout-created.ts';
import type { ReleaseFor } from './answers.ts';

export interface MoltUpdatesDeps {
  readonly store: OperatorStore;
  /** Discovered releases, newest first (the operator's cached source). */
  readonly releases: () => Promise<readonly Release[]>;
  /** The pools in force (live: declared pools change). */
  readonly pools: () => readonly Pool[];
  /** CAPI Cluster name → the molt pool its MachineSets' machines are in. */
  readonly clusters: Readonly<Record<string, string>>;
  /** What the operator last saw of a machine's agent. */
  readonly observed: (machine: string) => Observation | undefined;
  readonly now: () => number;
  readonly log?: (line: string) => void;
}

/**
 * The molt machine id a CAPI Machine names: its `molt.dev/machine` annotation, else `molt://<id>`
 * as its providerID, else its name.
 */
export const moltMachineId = (ref: CapiMachineRef): string =>
  ref.moltMachine ??
  (ref.providerID?.startsWith('molt://') === true
    ? ref.providerID.slice('molt://'.length)
    : ref.name);

async function machineOf(
  d: MoltUpdatesDeps,
  ref: CapiMachineRef,
): Promise<MachineRecord | undefined> {
  const id = moltMachineId(ref);
  return (await d.store.read()).machines.find((m) => m.id === id);
}

/** The pool a Machine's molt machine is in, or a MachineSet's Cluster is mapped to. */
async function poolOf(d: MoltUpdatesDeps, ref: CapiMachineRef): Promise<Pool | undefined> {
  const name =
    ref.kind === 'MachineSet' ? d.clusters[ref.clusterName] : (await machineOf(d, ref))?.pool;
  return d.pools().find((p) => p.name === name);
}

export function moltUpdates(d: MoltUpdatesDeps): InPlaceUpdates & { releaseFor: ReleaseFor } {
  return {
    async manages(ref) {
      if (ref.kind === 'MachineSet') return (await poolOf(d, ref)) !== undefined;
      return (await machineOf(d, ref)) !== undefined;
    },
    async releaseFor(version, ref) {
      const pool = await poolOf(d, ref);
      if (pool === undefined) return undefined;
      const [releases, stored] = await Promise.all([d.releases(), d.store.read()]);
      return releaseCarrying(version, pool, releases, stored.blocks)?.version;
    },
    async update(ref, version): Promise<InPlaceUpdateState> {
      const [stored, releases] = await Promise.all([d.store.read(), d.releases()]);
      const machine = stored.machines.find((m) => m.id === moltMachineId(ref));
      const status = machine === undefined ? undefined : d.observed(machine.id)?.status;
      const out = capiUpdate({
        machine,
        version,
        pool: d.pools().find((p) => p.name === machine?.pool),
        releases,
        rollouts: stored.rollouts,
        blocks: stored.blocks,
        booted: status === undefined ? undefined : booted(status).digest,
        now: d.now(),
      });
      if (out.create !== undefined) await create(d, out.create, ref);
      return out.answer;
    },
  };
}

async function create(
  d: MoltUpdatesDeps,
  r: NonNullable<ReturnType<typeof capiUpdate>['create']>,
  ref: CapiMachineRef,
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
