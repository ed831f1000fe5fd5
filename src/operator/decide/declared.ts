// SPDX-License-Identifier: Apache-2.0
/**
 * What the declared molt.dev objects ask of the operator this pass (docs/adr/0011), as a pure
 * function of them, the fleet file's pools, the store and the pools last accepted:
 *
 * - **Pools**: the fleet file's and the accepted declared ones (a name the file defines stays the
 *   file's). A pool whose new spec is refused keeps its last accepted spec; one never accepted in
 *   this process is frozen (nothing starts) rather than left without policies. A pool being
 *   deleted follows nothing any more (no new rollout), its rollouts are cancelled (machines in
 *   flight finish and uncordon their nodes), and once none of its machines is in flight its
 *   deletion is let through.
 * - **Holds and pins**: each `MachineHold` is the store's hold of its machine (a pin with
 *   `version`) unless a person holds it; the operator's holds whose object is gone are cleared.
 * - **Rollout actions**, by level: `paused: true` pauses an Active rollout and `false` resumes a
 *   Paused one, `approved` approves, `cancelled` cancels, `rollback` rolls back (an Active rollout
 *   is paused first). Asking for what already is changes nothing.
 */
import type { Pool, Rollout } from '../../core/rollout/types.ts';
import { isEnded } from '../../core/rollout/vocabulary.ts';
import type { DeclaredVerdict, RolloutRequest } from '../ports/declared.ts';
import {
  isInvalid,
  type ActionStep,
  type DeclaredAction,
  type DeclaredInput,
  type DeclaredPlan,
} from './declared-types.ts';

export { Forever } from './declared-types.ts';
export type { ActionStep, DeclaredInput, InventoryChanges } from './declared-types.ts';

/** Nothing starts and nothing is followed: a pool whose spec the operator cannot use. */
const frozen = (name: string): Pool => ({
  name,
  policies: [{ kind: 'concurrency', limit: { count: 0 } }],
});

/** A pool being deleted keeps its policies for what is in flight, and follows nothing new. */
function followingNothing(p: Pool): Pool {
  const still: { -readonly [K in keyof Pool]: Pool[K] } = { ...p };
  delete still.channel;
  delete still.promoteFrom;
  return still;
}

const inFlight = (r: Rollout): boolean =>
  Object.values(r.machines).some((p) => p.phase === 'InFlight');

/** The actions the Rollout objects' specs ask for. */
export const requestedActions = (i: DeclaredInput): ActionStep[] =>
  i.declared.requests.flatMap((q) => requested(q, i));

export function declaredPools(
  i: DeclaredInput,
): Omit<DeclaredPlan, 'holds' | 'actions' | 'inventory'> {
  const fileNames = new Set(i.filePools.map((p) => p.name));
  const pools: Pool[] = [...i.filePools];
  const accepted = new Map<string, Pool>();
  const verdicts: DeclaredVerdict[] = [];
  const release: string[] = [];
  for (const d of i.declared.pools) {
    const ofPool = i.stored.rollouts.filter((r) => r.pool === d.name);
    const status = poolStatus(i, d.name, ofPool);
    const verdict = (accepted: boolean, reason: string, message: string): DeclaredVerdict => ({
      kind: 'Pool',
      name: d.name,
      generation: d.generation,
      accepted,
      reason,
      message,
      status,
    });
    if (fileNames.has(d.name)) {
      verdicts.push(
        verdict(false, 'DefinedInFleetFile', `the fleet file defines pool ${d.name}; it wins`),
      );
      continue;
    }
    const good = isInvalid(d) ? i.lastAccepted.get(d.name) : d.pool;
    const effective = good ?? frozen(d.name);
    if (!isInvalid(d)) accepted.set(d.name, d.pool);
    else if (good !== undefined) accepted.set(d.name, good);
    if (d.deleting) {
      pools.push(followingNothing(effective));
      if (!ofPool.some(inFlight)) release.push(d.name);
      continue;
    }
    pools.push(effective);
    if (isInvalid(d))
      verdicts.push(
        verdict(
          false,
          'InvalidSpec',
          `${d.invalid}; ${good === undefined ? 'nothing starts in this pool until it is fixed' : 'the last accepted spec stays in force'}`,
        ),
      );
    else verdicts.push(verdict(true, 'Accepted', followed(d.pool)));
  }
  return { pools, accepted, verdicts, release };
}

/** A pool's status besides its verdict: its machines, and the rollout running in it. */
function poolStatus(i: DeclaredInput, name: string, ofPool: readonly Rollout[]) {
  const active = ofPool.find((r) => !isEnded(r.state));
  return {
    machines: i.stored.machines.filter((m) => m.pool === name).length,
    // `null`, not absent: the status is merge-patched, and only null removes the last one.
    rollout: active?.id ?? null,
  };
}

const followed = (p: Pool): string =>
  p.promoteFrom !== undefined
    ? `promotes what pool ${p.promoteFrom} completed`
    : p.channel !== undefined
      ? `follows channel ${p.channel}`
      : 'follows no channel (rollouts only by hand)';

/** Rollouts of pools being deleted are cancelled: none starts, in-flight machines finish. */
export function deletions(i: DeclaredInput): ActionStep[] {
  const deleting = new Set(i.declared.pools.filter((p) => p.deleting).map((p) => p.name));
  return i.stored.rollouts
    .filter((r) => deleting.has(r.pool) && !isEnded(r.state))
    .map((r) => ({
      rollout: r.id,
      action: 'cancel',
      by: 'kubernetes:Pool',
      reason: `pool ${r.pool} is being deleted`,
    }));
}

const fieldOf: Readonly<Record<DeclaredAction, string>> = {
  pause: 'paused',
  resume: 'paused',
  approve: 'approved',
  cancel: 'cancelled',
  rollback: 'rollback',
};

/** The actions a Rollout's spec asks for, given its rollout's state now (by level). */
function wantedActions(q: RolloutRequest, r: Rollout, hasRollback: boolean): DeclaredAction[] {
  if (q.cancelled === true) return isEnded(r.state) ? [] : ['cancel'];
  const wanted: [boolean, DeclaredAction][] = [
    [q.approved === true && r.state === 'AwaitingApproval', 'approve'],
    [(q.paused === true || q.rollback === true) && r.state === 'Active', 'pause'],
    [q.paused === false && q.rollback !== true && r.state === 'Paused', 'resume'],
    [q.rollback === true && !hasRollback, 'rollback'],
  ];
  return wanted.filter(([yes]) => yes).map(([, action]) => action);
}

function requested(q: RolloutRequest, i: DeclaredInput): ActionStep[] {
  const r = i.stored.rollouts.find((x) => i.objectName(x.id) === q.rollout);
  if (r === undefined) return [];
  const hasRollback = i.stored.rollouts.some((x) => x.id === `${r.id}-rollback`);
  return wantedActions(q, r, hasRollback).map((action) => ({
    rollout: r.id,
    action,
    by: q.by,
    reason: `spec.${fieldOf[action]} of Rollout ${q.rollout}`,
  }));
}
