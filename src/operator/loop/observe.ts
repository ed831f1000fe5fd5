// SPDX-License-Identifier: Apache-2.0
/**
 * Asking agents for their status, a few at a time, each with a deadline — only the ones a pass
 * needs to ask (`decide/polling.ts`); the others keep what was last seen of them, carried in the
 * pass state from pass to pass.
 */
import { isMoltError } from '../../core/errors.ts';
import type { AgentGateway } from '../ports/agents.ts';
import type { MachineRecord } from '../ports/store.ts';
import { withAwaySince, type Observation } from '../decide/observation.ts';
import { machinesToPoll } from '../decide/polling.ts';
import type { Rollout } from '../../core/rollout/types.ts';
import type { ReconcileDeps } from './deps.ts';

export const DEFAULT_RESYNC_MS = 60_000;

/** What is carried between passes: the last observations and each stream's count when asked. */
export interface ObservedState {
  readonly observations: Map<string, Observation>;
  readonly askedAt: Map<string, number>;
}

export async function observeAll(
  agents: AgentGateway,
  machines: readonly MachineRecord[],
  o: { readonly now: () => number; readonly concurrency?: number },
): Promise<Map<string, Observation>> {
  const seen = new Map<string, Observation>();
  const queue = [...machines];
  const worker = async (): Promise<void> => {
    for (let m = queue.shift(); m !== undefined; m = queue.shift()) {
      try {
        seen.set(m.id, { at: o.now(), status: await agents.status(m) });
      } catch (e) {
        const error = isMoltError(e) ? `${e.code}: ${e.message}` : String(e);
        seen.set(m.id, { at: o.now(), error });
      }
    }
  };
  await Promise.all(Array.from({ length: o.concurrency ?? 16 }, worker));
  return seen;
}

/** Ask `machines` (recording each stream's change count first), folding answers into `state`. */
export async function ask(
  d: ReconcileDeps,
  state: ObservedState,
  machines: readonly MachineRecord[],
): Promise<void> {
  for (const m of machines) {
    const s = d.watch?.stream?.(m.id);
    if (s === undefined) state.askedAt.delete(m.id);
    else state.askedAt.set(m.id, s.changes);
  }
  for (const [id, o] of await observeAll(d.agents, machines, { now: d.now }))
    state.observations.set(id, withAwaySince(state.observations.get(id), o));
}

/** Ask `machines` now and put their answers into this pass's `agents` too. */
export async function askAgain(
  d: ReconcileDeps,
  state: ObservedState,
  agents: Map<string, Observation>,
  machines: readonly MachineRecord[],
): Promise<void> {
  await ask(d, state, machines);
  for (const m of machines) {
    const o = state.observations.get(m.id);
    if (o !== undefined) agents.set(m.id, o);
  }
}

/**
 * This pass's observations: the machines that need it are asked, the rest keep their last
 * observation. Returns what every managed machine was last seen as, and which were asked now.
 */
export async function observePass(
  d: ReconcileDeps,
  state: ObservedState,
  stored: { readonly machines: readonly MachineRecord[]; readonly rollouts: readonly Rollout[] },
): Promise<{ agents: Map<string, Observation>; asked: Set<string> }> {
  const ids = new Set(stored.machines.map((m) => m.id));
  for (const id of state.observations.keys())
    if (!ids.has(id)) {
      state.observations.delete(id);
      state.askedAt.delete(id);
    }
  const asked = machinesToPoll({
    machines: [...ids],
    rollouts: stored.rollouts,
    previous: state.observations,
    askedAt: state.askedAt,
    stream: (id) => d.watch?.stream?.(id),
    now: d.now(),
    resyncMs: d.settings.resyncMs ?? DEFAULT_RESYNC_MS,
  });
  await ask(
    d,
    state,
    stored.machines.filter((m) => asked.has(m.id)),
  );
  return { agents: new Map(state.observations), asked };
}
