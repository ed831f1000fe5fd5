// SPDX-License-Identifier: Apache-2.0
/**
 * Staging ahead (docs/adr/0019 §2), pure: which waiting machines of a rollout to stage now, and
 * which of the stagings a rollout recorded to discard or forget. A staged machine only reboots
 * when its start comes (the loop applies the staged operation instead of asking for an upgrade).
 *
 * Only what a rollout recorded is ever discarded: a person's `molt node upgrade --stage` is theirs.
 */
import type { MachineDecision, Pool, Rollout } from '../../core/rollout/types.ts';
import { isEnded } from '../../core/rollout/vocabulary.ts';
import { holdActive } from '../../protocol/agent-hold.ts';
import { booted, type Observation } from './observation.ts';

export type StagingStep =
  /** Ask the machine's agent to stage the rollout's target. */
  | { readonly kind: 'stage'; readonly rollout: string; readonly machine: string }
  /** Drop the staged operation on the agent, then the record. */
  | {
      readonly kind: 'discard';
      readonly rollout: string;
      readonly machine: string;
      readonly operationId: string;
      readonly reason: string;
    }
  /** The agent no longer holds the recorded operation (applied, finished, discarded): drop the record. */
  | { readonly kind: 'forget'; readonly rollout: string; readonly machine: string };

export interface StagingInput {
  readonly rollouts: readonly Rollout[];
  /** This pass's plan: a machine waiting for its start is a candidate. */
  readonly decisions: readonly MachineDecision[];
  readonly pools: readonly Pool[];
  readonly agent: (machine: string) => Observation | undefined;
  readonly now: number;
}

/** The steps for the stagings `r` recorded. */
function recorded(r: Rollout, agent: StagingInput['agent']): StagingStep[] {
  const steps: StagingStep[] = [];
  for (const [machine, { operationId }] of Object.entries(r.staged ?? {})) {
    const status = agent(machine)?.status;
    if (status === undefined) continue; // not seen: nothing is known, nothing is done
    if (status.operation?.id !== operationId) {
      steps.push({ kind: 'forget', rollout: r.id, machine });
      continue;
    }
    if (isEnded(r.state) && status.phase === 'Staged')
      steps.push({
        kind: 'discard',
        rollout: r.id,
        machine,
        operationId,
        reason: `rollout ${r.id} is ${r.state}`,
      });
  }
  return steps;
}

/** Whether `r` may stage machines now: an active forward rollout of a pool that stages ahead. */
function stagesAhead(
  r: Rollout,
  pool: Pool | undefined,
): pool is Pool & Required<Pick<Pool, 'stage'>> {
  return (
    pool?.stage?.ahead === true &&
    pool.strategy !== 'replace' &&
    r.state === 'Active' &&
    // A fleet rollback switches to the other slot, which staging would overwrite.
    r.rollbackOf === undefined &&
    r.images === undefined
  );
}

/** Whether the machine's agent could stage `r`'s target now, per what it last answered. */
function canStage(r: Rollout, o: Observation | undefined, now: number): boolean {
  const s = o?.status;
  return (
    s !== undefined &&
    s.phase === 'Idle' &&
    !holdActive(s.hold, now) &&
    booted(s).digest !== r.target.digest
  );
}

/** New stagings for `r`: waiting machines in the plan's order, up to the pool's concurrency. */
function fresh(r: Rollout, pool: Pool, input: StagingInput): StagingStep[] {
  const staging = Object.entries(r.staged ?? {}).filter(([machine, { operationId }]) => {
    const s = input.agent(machine)?.status;
    // Still pulling, writing or verifying: it takes a share of the concurrency.
    return (
      s?.operation?.id === operationId && s.phase !== 'Staged' && r.machines[machine] === undefined
    );
  }).length;
  const room = (pool.stage?.concurrency ?? 1) - staging;
  if (room <= 0) return [];
  return input.decisions
    .filter(
      (d) =>
        d.rollout === r.id &&
        d.action === 'wait' &&
        r.staged?.[d.machine] === undefined &&
        canStage(r, input.agent(d.machine), input.now),
    )
    .slice(0, room)
    .map((d) => ({ kind: 'stage', rollout: r.id, machine: d.machine }));
}

/** Every staging step of this pass, over all rollouts. */
export function stagingSteps(input: StagingInput): StagingStep[] {
  const pools = new Map(input.pools.map((p) => [p.name, p]));
  return input.rollouts.flatMap((r) => {
    const pool = pools.get(r.pool);
    const kept = recorded(r, input.agent);
    return stagesAhead(r, pool) ? [...kept, ...fresh(r, pool, input)] : kept;
  });
}
