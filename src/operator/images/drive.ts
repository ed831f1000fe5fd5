// SPDX-License-Identifier: Apache-2.0
/**
 * The image driver (docs/adr/0013 decision 9): one pass beside the machine loop, on the leader.
 * Read the policies, workloads and repositories once (`observe.ts` `readImages`); settle the units
 * in flight (`settle.ts`); record the rollouts the targets ask for — created, superseded, paused
 * when their tag is gone (`core/images/rollouts.ts`); roll back halted ones (`onHalt`, default
 * `rollback`); plan with the one planner over the units as machines (`core/images/snapshot.ts`);
 * then apply its verdicts and start units: each recorded in flight before its spec changes.
 * Level-based like the machine loop: an operator stopped anywhere finishes the job next pass.
 */
import { planningInput } from '../../core/images/plan-input.ts';
import { isLive, rolloutChanges, type PolicyState } from '../../core/images/rollouts.ts';
import { imageSnapshot } from '../../core/images/snapshot.ts';
import { workloadRefOf, type ImageChange } from '../../core/images/workload.ts';
import { plan } from '../../core/rollout/plan.ts';
import { isEnded } from '../../core/rollout/vocabulary.ts';
import type { MachineDecision, Plan, Rollout } from '../../core/rollout/types.ts';
import { automaticRollbacks, reversedByRollbacks } from '../decide/fleet-rollback.ts';
import { endRolledBack } from '../transitions/rolled-back.ts';
import { createRollback } from '../loop/auto-rollback.ts';
import { changeRolloutState, pauseRollout } from '../loop/act.ts';
import { verdicts } from '../loop/verdicts.ts';
import type { StoredState } from '../ports/store.ts';
import { createRecorded } from '../transitions/rollout-created.ts';
import { decide, readImages, type ImagesDeps, type ImagesRead } from './observe.ts';
import { settleUnits } from './settle.ts';
import { recordUnitStart, writeUnit, type UnitWriter } from './unit-write.ts';

export interface ImageDriverDeps extends ImagesDeps, UnitWriter {}

const imageRollouts = (s: StoredState): Rollout[] =>
  s.rollouts.filter((r) => r.images !== undefined);

/** A rollout the driver still has work for: live, or with a unit in flight. */
const moving = (r: Rollout): boolean =>
  isLive(r) || Object.values(r.machines).some((p) => p.phase === 'InFlight');

/** Each policy's units, decisions, scan and rollouts this pass. */
function policyStates(read: ImagesRead, rollouts: readonly Rollout[]): PolicyState[] {
  return read.policies.map((policy) => {
    const units = read.selection.units.filter((u) => u.policy === policy.name);
    const s = read.scans.get(policy.repository);
    return {
      policy,
      units,
      decisions: new Map(units.map((u) => [u.id, decide(read, policy, u)])),
      scan: s?.ok === true ? s.scan : undefined,
      rollouts: rollouts.filter((r) => r.images?.policy === policy.name),
      now: read.now,
    };
  });
}

/** End a live image rollout another one replaces (any live state, unlike a machine rollout). */
const supersede = (d: ImageDriverDeps, id: string, reason: string): Promise<void> =>
  changeRolloutState(d, id, {
    to: 'Superseded',
    reason,
    from: (s) => !isEnded(s) && s !== 'Completed',
  });

async function createRollout(d: ImageDriverDeps, r: Rollout): Promise<void> {
  const policy = r.images?.policy ?? '';
  await createRecorded(d, r, {
    message: `rollout ${r.id}: image policy ${policy} moves to ${r.target.version}@${r.target.digest}`,
    data: { target: r.target, policy, ...(r.repairOf !== undefined && { repairOf: r.repairOf }) },
  });
}

/** Write what the targets ask for: new rollouts, superseded ones, paused ones. */
async function recordRollouts(d: ImageDriverDeps, states: readonly PolicyState[]): Promise<void> {
  for (const s of states) {
    const c = rolloutChanges(s, planningInput(s));
    for (const x of c.supersede) await supersede(d, x.rollout, x.reason);
    for (const r of c.create) await createRollout(d, r);
    for (const x of c.missing) await pauseRollout(d, x.rollout, x.reason);
  }
}

/** Halted rollouts of policies with `onHalt: rollback` (the default) put their units back. */
async function rollBackHalted(
  d: ImageDriverDeps,
  states: readonly PolicyState[],
): Promise<boolean> {
  const rollouts = states.flatMap((s) => s.rollouts);
  const pools = states.flatMap((s) =>
    [...new Set(s.rollouts.map((r) => r.pool))].map((name) => ({
      name,
      policies: [],
      onHalt: s.policy.onHalt ?? ('rollback' as const),
    })),
  );
  const backs = automaticRollbacks(pools, rollouts, d.now());
  for (const back of backs) await createRollback(d, back);
  for (const x of reversedByRollbacks([...rollouts, ...backs]))
    await endRolledBack(d, x, { by: 'operator' });
  return backs.length > 0;
}

/** The changes a start of `unit` makes: a rollback's recorded ones, else each followed container to the target. */
function changesOf(read: ImagesRead, r: Rollout, unit: string): ImageChange[] {
  if (r.rollbackOf !== undefined) return [...(r.images?.units[unit]?.changes ?? [])];
  const u = read.selection.units.find((x) => x.id === unit && x.policy === r.images?.policy);
  if (u === undefined || r.images === undefined) return [];
  const to = `${r.images.repository}:${r.target.version}@${r.target.digest}`;
  return u.containers.flatMap((name) => {
    const from = u.workload.containers.find((c) => c.name === name)?.image;
    return from === undefined || from === to ? [] : [{ container: name, from, to }];
  });
}

async function start(
  d: ImageDriverDeps,
  read: ImagesRead,
  r: Rollout,
  decision: MachineDecision,
): Promise<void> {
  const ref = workloadRefOf(decision.machine);
  const changes = changesOf(read, r, decision.machine);
  if (ref === undefined || changes.length === 0) return;
  if (!(await recordUnitStart(d, r, decision.machine, changes))) return;
  await writeUnit(d, r, { id: decision.machine, ref }, changes);
}

/** Plan one policy's rollouts (its limits count all its units), apply the verdicts, start units. */
async function planPolicy(
  d: ImageDriverDeps,
  read: ImagesRead,
  s: PolicyState,
  stored: StoredState,
): Promise<Plan> {
  const ids = new Set(s.rollouts.map((r) => r.id));
  const starts = stored.starts.filter((x) => ids.has(x.rollout));
  const decided = plan(imageSnapshot(s, starts), d.now());
  const byId = new Map(s.rollouts.map((r) => [r.id, r] as const));
  await verdicts(d, decided, byId);
  const halted = new Set(
    decided.rollouts.filter((v) => v.verdict === 'halt').map((v) => v.rollout),
  );
  for (const decision of decided.decisions) {
    const r = byId.get(decision.rollout);
    if (decision.action !== 'start' || r === undefined || halted.has(r.id)) continue;
    await start(d, read, r, decision);
  }
  return decided;
}

/** One pass; see the module comment. Throws when the cluster or the store cannot be read. */
export async function imagePass(d: ImageDriverDeps): Promise<void> {
  // No policy and nothing in flight: the cluster is not listed at all.
  if (d.policies().length === 0 && !imageRollouts(await d.store.read()).some(moving)) return;
  const read = await readImages(d);
  const policies = new Map(read.policies.map((p) => [p.name, p]));
  await settleUnits(d, imageRollouts(await d.store.read()), {
    workloads: read.workloads,
    policies,
  });
  await recordRollouts(d, policyStates(read, imageRollouts(await d.store.read())));
  let stored = await d.store.read();
  if (await rollBackHalted(d, policyStates(read, imageRollouts(stored))))
    stored = await d.store.read();
  const states = policyStates(read, imageRollouts(stored));
  const plans: Plan[] = [];
  for (const s of states) plans.push(await planPolicy(d, read, s, stored));
  d.lastPlan?.set(
    {
      at: d.now(),
      decisions: plans.flatMap((x) => x.decisions),
      rollouts: plans.flatMap((x) => x.rollouts),
    },
    states.flatMap((s) => s.rollouts.filter(isLive)),
    read.selection,
  );
}
