// SPDX-License-Identifier: Apache-2.0
/**
 * One reconcile pass of the operator (docs/adr/0005 §4), level-based: read the store, look at
 * the agents that need it (`decide/polling.ts`; the others keep their last observation), bring
 * the store's holds to the agents that answered (`holds.ts`), settle in-flight machines from
 * what their agents report, create rollouts for new releases when discovery is due, then plan
 * (core's pure `plan`), ask any machine the plan would start that was not asked this pass and
 * plan again, and act. Carried over from the previous pass: the time of the
 * last discovery and the last observations — nothing the store does not also say, so a restarted
 * operator (a new pass state: every agent asked) picks up exactly where the store says it was.
 */
import { ErrorCode, errorLine, isMoltError } from '../../core/errors.ts';
import { plan } from '../../core/rollout/plan.ts';
import { anyBefore, startsCutoff } from '../../core/rollout/starts-retention.ts';
import type { FleetSnapshot, Rollout } from '../../core/rollout/types.ts';
import type { MachineRecord, StoredState } from '../ports/store.ts';
import { recordTransition } from '../transitions/record.ts';
import { act, pauseRollout, replaceMachine, rollBack, submit } from './act.ts';
import { failingGate, type GateResults } from '../decide/gates.ts';
import { checkGates } from './gates.ts';
import { setProgress } from './machine-progress.ts';
import type { ReconcileDeps } from './deps.ts';
import { discover, untilDiscovery, type DiscoveryState } from './discover.ts';
import { rollBackHalted } from './auto-rollback.ts';
import { askAgain, observePass, type ObservedState } from './observe.ts';
import { syncHolds } from './holds.ts';
import { stageAhead } from './staging.ts';
import { startsToConfirm } from '../decide/polling.ts';
import { isIdentityRefusal, warnImpostors } from './impostors.ts';
import type { Observation } from '../decide/observation.ts';
import { fleetSnapshot, machinePart } from '../decide/snapshot.ts';
import {
  isReplaceOperation,
  progressStep,
  REPLACE_PREFIX,
  type ProgressOptions,
  type ProgressStep,
  type ProviderAnswer,
} from '../decide/progress.ts';

export interface PassState extends ObservedState, DiscoveryState {
  /** Machines already warned about for presenting another machine's certificate (`impostors.ts`). */
  readonly impostors: Set<string>;
}

/** A fresh pass state (a new operator, or a new term as leader). */
export const newPassState = (): PassState => ({
  lastDiscovery: undefined,
  firstSeen: new Map(),
  impostors: new Set(),
  observations: new Map(),
  askedAt: new Map(),
});

/** What one pass saw: every agent's answer and every health gate's result. */
interface PassSeen {
  readonly agents: ReadonlyMap<string, Observation>;
  readonly gates: GateResults;
}

const snapshotOf = (d: ReconcileDeps, stored: StoredState, seen: PassSeen): FleetSnapshot =>
  fleetSnapshot(stored, { agent: (id) => seen.agents.get(id), gates: seen.gates }, d.settings);

/** The pool's provider on a replace operation; a refusal (4xx, garbage) ends it, the rest waits. */
async function askProvider(
  d: ReconcileDeps,
  r: Rollout,
  machine: MachineRecord,
): Promise<ProviderAnswer | undefined> {
  const id = r.machines[machine.id]?.operationId;
  if (!isReplaceOperation(id)) return undefined;
  const provider = d.providers?.(r.pool);
  if (provider === undefined) return { error: `pool ${r.pool} has no provider`, terminal: false };
  try {
    return await provider.status(machine, id.slice(REPLACE_PREFIX.length));
  } catch (e) {
    d.log(`${machine.id}: provider status unknown, asking again next pass: ${errorLine(e)}`);
    return { error: errorLine(e), terminal: isMoltError(e, ErrorCode.ProviderFailed) };
  }
}

function progressOptions(
  d: ReconcileDeps,
  r: Rollout,
  seen: PassSeen,
  provider: ProviderAnswer | undefined,
): ProgressOptions {
  const pool = d.settings.pools.find((p) => p.name === r.pool);
  const failing = failingGate(pool, d.settings.fleetPolicies, seen.gates);
  return {
    now: d.now(),
    unreachableFailMs: d.settings.unreachableFailMs,
    image: d.settings.imageFor(r.target.digest),
    canReplace: d.providers?.(r.pool) !== undefined,
    ...(pool?.strategy !== undefined && { strategy: pool.strategy }),
    ...(provider !== undefined && { provider }),
    ...(failing !== undefined && { failingGate: failing }),
    ...(d.settings.gateGraceMs !== undefined && { gateGraceMs: d.settings.gateGraceMs }),
  };
}

async function carryOut(
  d: ReconcileDeps,
  r: Rollout,
  machine: MachineRecord,
  step: ProgressStep,
): Promise<void> {
  if (step.kind === 'submit') await submit(d, r, machine);
  if (step.kind === 'rollback') await rollBack(d, r, machine, step.reason);
  if (step.kind === 'replace') {
    const expected = r.machines[machine.id]?.operationId;
    await replaceMachine(d, r, machine, {
      fallback: step.reason,
      ...(expected !== undefined && { expected }),
    });
  }
  if (step.kind === 'pause') await putBack(d, r, machine.id, step);
  if (step.kind === 'set') await setResult(d, r, machine.id, step.progress);
}

async function settleOne(
  d: ReconcileDeps,
  r: Rollout,
  machine: MachineRecord | undefined,
  seen: PassSeen,
): Promise<void> {
  if (machine === undefined) return;
  const observation = seen.agents.get(machine.id);
  const provider = await askProvider(d, r, machine);
  const step = progressStep(r, machine.id, observation, progressOptions(d, r, seen, provider));
  // An agent that answers, but not molt's agent protocol, is not guessed at: stop starting.
  if (observation?.error?.startsWith(`${ErrorCode.AgentProtocol}:`) === true)
    await pauseRollout(
      d,
      r.id,
      `the agent of ${machine.id} answers garbage (${observation.error})`,
    );
  // Nor is an endpoint that leads to another machine: its progress cannot be known from there.
  if (isIdentityRefusal(observation))
    await pauseRollout(d, r.id, `${machine.id} cannot be watched: ${observation?.error ?? ''}`);
  await carryOut(d, r, machine, step);
}

async function settleInFlight(
  d: ReconcileDeps,
  stored: StoredState,
  seen: PassSeen,
): Promise<void> {
  const records = new Map(stored.machines.map((m) => [m.id, m]));
  for (const r of stored.rollouts)
    for (const [machine, p] of Object.entries(r.machines))
      if (p.phase === 'InFlight') await settleOne(d, r, records.get(machine), seen);
}

/** A cluster-side failure: the machine is Pending again (untouched), and the rollout pauses. */
async function putBack(
  d: ReconcileDeps,
  r: Rollout,
  machine: string,
  step: { readonly operationId: string; readonly reason: string },
): Promise<void> {
  await recordTransition(d, {
    write: (store) =>
      store.updateRollout(r.id, (cur) => {
        const p = cur.machines[machine];
        if (p?.phase !== 'InFlight' || p.operationId !== step.operationId) return cur;
        const machines = Object.fromEntries(
          Object.entries(cur.machines).filter(([id]) => id !== machine),
        );
        return { ...cur, machines };
      }),
    record: {
      event: {
        kind: 'warning',
        rollout: r.id,
        machine,
        message: `${machine}: the cluster stopped its upgrade before the machine changed (${step.reason}); it will be tried again`,
      },
    },
  });
  await pauseRollout(
    d,
    r.id,
    `${machine} could not be drained: ${step.reason} — fix the cluster, then \`molt rollout resume ${r.id}\``,
  );
}

/** Set a machine's progress as its agent reported it; a finished machine's result is recorded. */
async function setResult(
  d: ReconcileDeps,
  r: Rollout,
  machine: string,
  p: Rollout['machines'][string],
): Promise<void> {
  const message = `${machine}: ${p.phase}${p.reason === undefined ? '' : ` (${p.reason})`}`;
  await recordTransition(d, {
    write: (store) => setProgress(store, r.id, machine, p),
    record: () =>
      p.phase === 'InFlight'
        ? undefined
        : {
            log: `${r.id}: ${message}`,
            event: {
              kind: 'machine-result',
              rollout: r.id,
              machine,
              message,
              data: { phase: p.phase, ...(p.reason !== undefined && { reason: p.reason }) },
            },
          },
  });
}

/** Run one pass. Throws only when the store itself fails (the loop logs it and tries again). */
/**
 * Drop the start records no pool's rate limit counts any more (image policies' rates, which
 * count workload starts, are covered by the week every start is kept). Only when there are some:
 * a pass writes nothing for it otherwise. A failure waits for the next pass.
 */
async function pruneOldStarts(d: ReconcileDeps, stored: StoredState): Promise<void> {
  const s = d.settings;
  const cutoff = startsCutoff([s.fleetPolicies, ...s.pools.map((p) => p.policies)], d.now());
  if (!anyBefore(stored.starts, cutoff)) return;
  await d.store.pruneStarts(cutoff).catch((e: unknown) => {
    d.log(`old start records not pruned: ${errorLine(e)}`);
  });
}

/** Discovery, when a scan is due; a failure is logged and the pass plans with what it knows. */
async function discoverIfDue(d: ReconcileDeps, state: PassState, seen: PassSeen): Promise<void> {
  try {
    // Only when a scan is due: otherwise this pass needs no fresh read of the store for it.
    if (untilDiscovery(d, state) === 0) {
      const now = machinePart(await d.store.read());
      await discover(d, snapshotOf(d, now, seen), state, now);
    }
  } catch (e) {
    // The registry being away must not stop rollouts in flight: they carry their target digest.
    d.log(`discovery failed, planning with the rollouts known: ${errorLine(e)}`);
  }
}

export async function reconcile(d: ReconcileDeps, state: PassState): Promise<void> {
  await d.declared?.refresh();
  const first = machinePart(await d.store.read());
  d.watch?.track(first.machines);
  const { agents, asked } = await observePass(d, state, first);
  const seen: PassSeen = { agents, gates: await checkGates(d) };
  await warnImpostors(d, seen.agents, state.impostors);
  await syncHolds(d, first, state, agents);
  await settleInFlight(d, first, seen);
  await discoverIfDue(d, state, seen);
  const everything = await d.store.read();
  const stored = machinePart(everything);
  await rollBackHalted(d, stored.rollouts);
  let decided = plan(snapshotOf(d, stored, seen), d.now());
  // A start never rests on a kept observation: those machines are asked, and the plan made again.
  const confirm = startsToConfirm(decided.decisions, asked);
  if (confirm.length > 0) {
    await askAgain(
      d,
      state,
      agents,
      stored.machines.filter((m) => confirm.includes(m.id)),
    );
    decided = plan(snapshotOf(d, stored, seen), d.now());
  }
  await act(d, decided, stored.rollouts, stored.machines);
  await stageAhead(d, { ...stored, decisions: decided.decisions, agents });
  await pruneOldStarts(d, everything);
  // Kubernetes plans run beside the rollouts: a failure here must not stop them (docs/adr/0012).
  await d.kubernetes?.pass().catch((e: unknown) => {
    d.log(`Kubernetes plans: ${errorLine(e)}`);
  });
  // So do image rollouts (docs/adr/0013): the cluster or a registry away stops only them.
  await d.images?.pass().catch((e: unknown) => {
    d.log(`image rollouts: ${errorLine(e)}`);
  });
}
