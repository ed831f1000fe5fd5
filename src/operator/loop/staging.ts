// SPDX-License-Identifier: Apache-2.0
/**
 * Carrying out the staging steps (`decide/staging.ts`, docs/adr/0019 §2): stage a waiting
 * machine and record the agent's operation on the rollout; discard what an ended rollout staged;
 * drop records the agents no longer hold. A refused or lost request is tried again next pass.
 */
import { errorLine } from '../../core/errors.ts';
import type { MachineDecision, Rollout, StagedMachine } from '../../core/rollout/types.ts';
import type { Observation } from '../decide/observation.ts';
import { stagingSteps, type StagingStep } from '../decide/staging.ts';
import type { MachineRecord, OperatorStore } from '../ports/store.ts';
import { recordTransition } from '../transitions/record.ts';
import type { ReconcileDeps } from './deps.ts';

/** Set (or, with `undefined`, drop) the record of `machine`'s staging on rollout `id`. */
async function setStaged(
  store: OperatorStore,
  id: string,
  machine: string,
  staged: StagedMachine | undefined,
): Promise<void> {
  await store.updateRollout(id, (r) => {
    const rest = Object.entries(r.staged ?? {}).filter(([m]) => m !== machine);
    const entries = staged === undefined ? rest : [...rest, [machine, staged] as const];
    const next: Rollout & { staged?: Rollout['staged'] } = { ...r };
    if (entries.length === 0) delete next.staged;
    else next.staged = Object.fromEntries(entries);
    return next;
  });
}

/** Record a staging made (or dropped, `staged` undefined) with its `machine-stage` event. */
async function recordStaging(
  d: ReconcileDeps,
  r: Rollout,
  machine: string,
  what: {
    readonly staged: StagedMachine | undefined;
    readonly message: string;
    readonly data: Record<string, unknown>;
  },
): Promise<void> {
  const message = `${machine}: ${what.message}`;
  await recordTransition(d, {
    write: (store) => setStaged(store, r.id, machine, what.staged),
    record: {
      log: `${r.id}: ${message}`,
      event: { kind: 'machine-stage', rollout: r.id, machine, message, data: what.data },
    },
  });
}

async function stage(d: ReconcileDeps, r: Rollout, machine: MachineRecord): Promise<void> {
  const image = d.settings.imageFor(r.target.digest);
  const drain = d.settings.pools.find((p) => p.name === r.pool)?.drain;
  let operationId: string;
  try {
    ({ operationId } = await d.agents.upgrade(machine, {
      image,
      stage: true,
      ...(drain !== undefined && { drain }),
    }));
  } catch (e) {
    d.log(`${machine.id}: staging not accepted, trying again next pass: ${errorLine(e)}`);
    return;
  }
  await recordStaging(d, r, machine.id, {
    staged: { operationId, at: d.now() },
    message: `staging ${r.target.version} ahead of its start (operation ${operationId})`,
    data: { operationId, image },
  });
}

async function discard(
  d: ReconcileDeps,
  r: Rollout,
  machine: MachineRecord,
  step: Extract<StagingStep, { kind: 'discard' }>,
): Promise<void> {
  try {
    await d.agents.discard(machine, step.operationId);
  } catch (e) {
    d.log(`${machine.id}: staged ${r.target.version} not discarded, trying again: ${errorLine(e)}`);
    return;
  }
  await recordStaging(d, r, machine.id, {
    staged: undefined,
    message: `discarded the staged ${r.target.version} (${step.reason})`,
    data: { operationId: step.operationId, discarded: true },
  });
}

/** Stage, discard and forget as this pass's plan and observations say. */
export async function stageAhead(
  d: ReconcileDeps,
  seen: {
    readonly rollouts: readonly Rollout[];
    readonly machines: readonly MachineRecord[];
    readonly decisions: readonly MachineDecision[];
    readonly agents: ReadonlyMap<string, Observation>;
  },
): Promise<void> {
  const steps = stagingSteps({
    rollouts: seen.rollouts,
    decisions: seen.decisions,
    pools: d.settings.pools,
    agent: (id) => seen.agents.get(id),
    now: d.now(),
  });
  const rollouts = new Map(seen.rollouts.map((r) => [r.id, r]));
  const machines = new Map(seen.machines.map((m) => [m.id, m]));
  for (const step of steps) {
    const r = rollouts.get(step.rollout);
    const machine = machines.get(step.machine);
    if (r === undefined || machine === undefined) continue;
    if (step.kind === 'stage') await stage(d, r, machine);
    else if (step.kind === 'discard') await discard(d, r, machine, step);
    else await setStaged(d.store, r.id, machine.id, undefined);
  }
}
