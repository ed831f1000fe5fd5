// SPDX-License-Identifier: Apache-2.0
/**
 * Carrying out a plan (docs/adr/0005 §4). A start is recorded in the store — start record and
 * `InFlight` in one atomic write — before the agent is asked, so a crash between the two is
 * resumed by `decide/progress.ts` and never starts a machine twice or forgets a start a rate counts.
 */
import { isMoltError } from '../../core/errors.ts';
import type { MachineDecision, MachineProgress, Plan, Rollout } from '../../core/rollout/types.ts';
import { CANNOT_APPLY, REPLACE_PREFIX } from '../decide/progress.ts';
import type { MachineRecord } from '../ports/store.ts';
import { recordTransition, type TransitionSink } from '../transitions/record.ts';
import type { ReconcileDeps } from './deps.ts';
import { replaceProgress, setProgress } from './machine-progress.ts';
import { settleRefusal } from './refused.ts';
import { verdicts } from './verdicts.ts';
import { ask } from './ask.ts';
import { withoutUserInfo } from '../../core/redact.ts';
import { withState } from '../../core/rollout/state.ts';

// A molt error's text has no URL user-info already; anything else (a fetch that threw) may.
const describeError = (e: unknown): string =>
  isMoltError(e) ? `${e.code}: ${e.message}` : withoutUserInfo(String(e));

/**
 * Replace a machine through its pool's provider (a replace pool, or an in-place pool's fallback
 * when the agent cannot apply the release: `fallback` says why, `expected` is the agent's
 * operation it replaces). The provider's id is remembered as `replace:<id>`; a refused or lost
 * request is asked again next pass (the provider answers a running replace's id).
 */
export async function replaceMachine(
  d: ReconcileDeps,
  rollout: Rollout,
  machine: MachineRecord,
  o: { readonly fallback?: string; readonly expected?: string } = {},
): Promise<void> {
  const provider = d.providers?.(rollout.pool);
  if (provider === undefined) {
    d.log(`${machine.id}: pool ${rollout.pool} replaces machines but has no provider`);
    return;
  }
  const { digest, version } = rollout.target;
  const image = d.settings.imageFor(digest);
  let accepted: string;
  try {
    ({ operationId: accepted } = await provider.replace(machine, { image, digest, version }));
  } catch (e) {
    d.log(`${machine.id}: replace request not accepted, retrying next pass: ${describeError(e)}`);
    return;
  }
  const operationId = `${REPLACE_PREFIX}${accepted}`;
  const started = rollout.machines[machine.id]?.startedAt ?? d.now();
  const progress: MachineProgress = { phase: 'InFlight', startedAt: started, operationId };
  const message =
    o.fallback === undefined
      ? `${machine.id}: replace with ${version} accepted by the provider (operation ${accepted})`
      : `${machine.id}: the agent cannot apply ${version} (${o.fallback}); replacing the machine through the provider (operation ${accepted})`;
  await recordTransition(d, {
    write: (store) =>
      replaceProgress(store, rollout.id, machine.id, { progress, expected: o.expected }),
    record: {
      log: `${rollout.id}: ${message}`,
      event: {
        kind: 'machine-start',
        rollout: rollout.id,
        machine: machine.id,
        message,
        data: {
          operationId,
          image,
          strategy: 'replace',
          ...(o.fallback !== undefined && { fallback: o.fallback }),
        },
      },
    },
  });
}

const verb = (r: Rollout): string => (r.rollbackOf === undefined ? 'upgrade' : 'rollback');

/**
 * Ask the agent to upgrade (a replace pool: the provider to replace); remember the operation id.
 * Busy or unreachable: the next pass retries; refused for who asks, or held on the agent: as
 * {@link settleRefusal} says. An agent that cannot apply the release ({@link CANNOT_APPLY}) in a
 * pool with a provider: the machine is replaced instead.
 */
export async function submit(
  d: ReconcileDeps,
  rollout: Rollout,
  machine: MachineRecord,
): Promise<void> {
  const pool = d.settings.pools.find((p) => p.name === rollout.pool);
  if (pool?.strategy === 'replace') {
    await replaceMachine(d, rollout, machine);
    return;
  }
  const image = d.settings.imageFor(rollout.target.digest);
  try {
    const { operationId } = await ask(d, rollout, machine, image);
    const started = rollout.machines[machine.id]?.startedAt ?? d.now();
    await recordTransition(d, {
      write: (store) =>
        setProgress(store, rollout.id, machine.id, {
          phase: 'InFlight',
          startedAt: started,
          operationId,
        }),
      record: {
        event: {
          kind: 'machine-start',
          rollout: rollout.id,
          machine: machine.id,
          message: `${machine.id}: ${verb(rollout)} to ${rollout.target.version} accepted (operation ${operationId})`,
          data: { operationId, image },
        },
      },
    });
  } catch (e) {
    if (isMoltError(e) && CANNOT_APPLY.has(e.code) && d.providers?.(rollout.pool) !== undefined) {
      await replaceMachine(d, rollout, machine, { fallback: describeError(e) });
      return;
    }
    if (isMoltError(e) && (await settleRefusal(d, rollout, machine, e))) return;
    d.log(`${machine.id}: upgrade request not accepted, retrying next pass: ${describeError(e)}`);
  }
}

async function start(
  d: ReconcileDeps,
  rollout: Rollout,
  decision: MachineDecision,
  machine: MachineRecord,
): Promise<void> {
  const at = d.now();
  try {
    await d.store.recordStart(
      { machine: machine.id, pool: rollout.pool, rollout: rollout.id, at },
      { phase: 'InFlight', startedAt: at },
    );
  } catch (e) {
    if (isMoltError(e, 'MOLT_ALREADY_STARTED')) return; // another pass got there first
    throw e;
  }
  const batch = decision.batch === 0 ? 'canary' : `batch ${String(decision.batch)}`;
  d.log(`${machine.id}: starting (${rollout.id}, ${batch})`);
  await submit(
    d,
    {
      ...rollout,
      machines: { ...rollout.machines, [machine.id]: { phase: 'InFlight', startedAt: at } },
    },
    machine,
  );
}

/**
 * Roll a machine back through its agent (it failed the pool's health gates after its upgrade)
 * and record it as RolledBack, which counts against the failure budget. A refused request (the
 * agent busy or away) is retried at the next pass: the machine stays in flight meanwhile.
 */
export async function rollBack(
  d: ReconcileDeps,
  rollout: Rollout,
  machine: MachineRecord,
  reason: string,
): Promise<void> {
  let operationId: string;
  try {
    ({ operationId } = await d.agents.rollback(machine));
  } catch (e) {
    d.log(`${machine.id}: rollback not accepted, retrying next pass: ${describeError(e)}`);
    return;
  }
  const p = rollout.machines[machine.id];
  const progress: MachineProgress = {
    phase: 'RolledBack',
    ...(p?.startedAt !== undefined && { startedAt: p.startedAt }),
    ...(p?.operationId !== undefined && { operationId: p.operationId }),
    finishedAt: d.now(),
    reason,
  };
  const message = `${machine.id}: rolled back through its agent (operation ${operationId}): ${reason}`;
  await recordTransition(d, {
    write: (store) => setProgress(store, rollout.id, machine.id, progress),
    record: {
      log: `${rollout.id}: ${message}`,
      event: {
        kind: 'machine-rollback',
        rollout: rollout.id,
        machine: machine.id,
        message,
        data: { operationId, reason },
      },
    },
  });
}

/** A state change of a rollout for a reason, made only from the states `from` accepts. */
export interface StateChange {
  readonly to: 'Paused' | 'Superseded';
  readonly reason: string;
  readonly from: (state: Rollout['state']) => boolean;
}

/** Set rollout `id`'s state as `change` says, and record it; nothing when it was not in a `from` state. */
export async function changeRolloutState(
  d: TransitionSink,
  id: string,
  change: StateChange,
): Promise<void> {
  const { to, reason } = change;
  const message = `rollout ${id} ${to.toLowerCase()}: ${reason}`;
  await recordTransition(d, {
    write: async (store) => {
      const outcome = { changed: false };
      await store.updateRollout(id, (r) => {
        outcome.changed = change.from(r.state);
        if (!outcome.changed) return r;
        return to === 'Superseded'
          ? { ...r, state: to, endReason: reason }
          : withState(r, to, reason);
      });
      return outcome.changed;
    },
    record: (changed) =>
      changed
        ? {
            log: message,
            event: { kind: 'rollout-state', rollout: id, message, data: { state: to, reason } },
          }
        : undefined,
  });
}

/**
 * Pause an Active rollout for `reason` (a withdrawn release, an agent answering garbage): the
 * operator stops starting machines rather than guess; machines in flight finish.
 */
export async function pauseRollout(d: TransitionSink, id: string, reason: string): Promise<void> {
  await changeRolloutState(d, id, { to: 'Paused', reason, from: (s) => s === 'Active' });
}

/** Apply a plan: rollout verdicts first (a halt stops its starts), then the starts in order. */
export async function act(
  d: ReconcileDeps,
  plan: Plan,
  rollouts: readonly Rollout[],
  machines: readonly MachineRecord[],
): Promise<void> {
  const byId = new Map(rollouts.map((r) => [r.id, r]));
  await verdicts(d, plan, byId);
  const halted = new Set(plan.rollouts.filter((v) => v.verdict === 'halt').map((v) => v.rollout));
  const records = new Map(machines.map((m) => [m.id, m]));
  for (const decision of plan.decisions) {
    const rollout = byId.get(decision.rollout);
    const machine = records.get(decision.machine);
    if (decision.action !== 'start' || rollout === undefined || machine === undefined) continue;
    if (halted.has(rollout.id)) continue;
    await start(d, rollout, decision, machine);
  }
}
