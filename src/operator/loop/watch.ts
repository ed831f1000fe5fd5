// SPDX-License-Identifier: Apache-2.0
/**
 * Following every managed machine's agent (docs/adr/0005 §4, "Following agents"). One follower per
 * machine keeps its live event stream open and reconnects when the stream ends — which it does on
 * every reboot: every 250 ms for the first 5 s (a machine that reboots is back soon, and the
 * operator should see its result then, not a backoff step later: benchmark P3), then doubling to
 * 5 s for a machine that stays away. A `phase` or `result` event, a stream that is lost, and one
 * open again after a loss (a result may have come meanwhile: without this the last machine of a
 * rollout was seen a whole period late, benchmark P3) are reported through `onChange`, which the
 * composition root points at the loop's `wake()`: the operator reacts to a machine's progress
 * within a pass, not a poll period later.
 *
 * The machines followed are the ones the last pass saw in the store ({@link MachineWatch.track}):
 * registered machines are followed from the next pass, deregistered ones dropped.
 * {@link MachineWatch.stream} tells the pass whether a machine's stream is open and how many
 * changes it reported, so it asks only agents that may have changed (`decide/polling.ts`).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { AgentEvent } from '../../protocol/agent.ts';
import type { AgentEventSource } from '../ports/agent-events.ts';
import type { Leadership } from '../ports/leadership.ts';
import type { MachineRecord } from '../ports/store.ts';
import type { StreamState } from '../decide/polling.ts';
import type { ReconcileDeps } from './deps.ts';
import { startOperatorLoop, type LoopOptions, type OperatorLoop } from './loop.ts';
import { errorMessage } from '../../core/errors.ts';

/** What a follower reports: an event that changes what the operator should do, or a lost stream. */
export type WatchChange =
  | { readonly kind: 'event'; readonly phase: string; readonly result?: string }
  | { readonly kind: 'lost'; readonly error: string }
  /** Open again after a loss: what happened meanwhile (a result after a reboot) is unknown. */
  | { readonly kind: 'reopened' };

export interface MachineWatch {
  /** Follow exactly these machines (by id and endpoint) from now on. */
  track(machines: readonly MachineRecord[]): void;
  /** The stream of a followed machine; undefined when it is not followed. */
  stream(machine: string): StreamState | undefined;
  /** Stop every follower and wait for them to end. */
  close(): Promise<void>;
}

export interface WatchOptions {
  readonly onChange: (machine: string, change: WatchChange) => void;
  /** Reconnect delay for the first 20 attempts; then it doubles up to 20×. @default 250 */
  readonly retryMs?: number;
}

interface Follower {
  readonly endpoint: string;
  readonly stop: AbortController;
  readonly done: Promise<void>;
  readonly state: { open: boolean; changes: number };
}

/** Attempts at the first delay before backing off: 5 s of a reboot at the default 250 ms. */
const QUICK_ATTEMPTS = 20;

/** The delay before reconnect attempt `attempt` (1-based, counted since the agent's last event). */
export function reconnectDelay(attempt: number, first: number): number {
  if (attempt <= QUICK_ATTEMPTS) return first;
  return Math.min(first * 2 ** (attempt - QUICK_ATTEMPTS), first * 20);
}

async function follow(
  source: AgentEventSource,
  machine: MachineRecord,
  f: { readonly signal: AbortSignal; readonly state: Follower['state'] },
  o: WatchOptions,
): Promise<void> {
  const { signal, state } = f;
  const first = o.retryMs ?? 250;
  let attempt = 0;
  let lostBefore = false;
  // A function, not a property read: the abort happens while this awaits.
  const stopped = (): boolean => signal.aborted;
  const report = (e: AgentEvent): void => {
    // An event, not an accepted stream, proves the agent is back (a stream that opens and ends at
    // once backs off like a refused one).
    attempt = 0;
    if (e.kind === 'phase' || e.kind === 'result') state.changes++;
    if (e.kind === 'phase' || e.kind === 'result')
      o.onChange(machine.id, {
        kind: 'event',
        phase: e.phase,
        ...(e.result !== undefined && { result: e.result.result }),
      });
  };
  while (!stopped()) {
    let lost = 'the event stream ended';
    // Opened: whatever happened while it was not is unknown, so it counts as a change.
    const opened = (): void => {
      state.open = true;
      state.changes++;
      if (lostBefore) o.onChange(machine.id, { kind: 'reopened' });
    };
    try {
      for await (const e of source.follow(machine, signal, opened)) report(e);
    } catch (e) {
      lost = errorMessage(e);
    }
    state.open = false;
    state.changes++;
    if (stopped()) return;
    lostBefore = true;
    o.onChange(machine.id, { kind: 'lost', error: lost });
    attempt++;
    await sleep(reconnectDelay(attempt, first), undefined, { signal }).catch(() => undefined);
  }
}

export function startMachineWatch(source: AgentEventSource, o: WatchOptions): MachineWatch {
  const followers = new Map<string, Follower>();
  const drop = (id: string): void => {
    followers.get(id)?.stop.abort();
    followers.delete(id);
  };
  return {
    track(machines) {
      const wanted = new Map(machines.map((m) => [m.id, m]));
      for (const [id, f] of followers) if (wanted.get(id)?.endpoint !== f.endpoint) drop(id);
      for (const m of wanted.values()) {
        if (followers.has(m.id)) continue;
        const stop = new AbortController();
        const state = { open: false, changes: 0 };
        followers.set(m.id, {
          endpoint: m.endpoint,
          stop,
          state,
          done: follow(source, m, { signal: stop.signal, state }, o),
        });
      }
    },
    stream(machine) {
      const s = followers.get(machine)?.state;
      return s === undefined ? undefined : { open: s.open, changes: s.changes };
    },
    async close() {
      const all = [...followers.values()];
      followers.clear();
      for (const f of all) f.stop.abort();
      await Promise.all(all.map((f) => f.done));
    },
  };
}

/**
 * The operator loop as `molt operator` runs it: woken by the agents' event streams (a machine
 * finished, failed or went away) as well as by its period. `stop` ends the loop, then the streams.
 */
export function startWatchedLoop(
  d: Omit<ReconcileDeps, 'watch'>,
  events: AgentEventSource,
  leadership: Leadership,
  o: LoopOptions,
): OperatorLoop {
  const waker: Pick<OperatorLoop, 'wake'> = { wake: () => undefined };
  const watch = startMachineWatch(events, {
    // A result (or a stream back after a reboot, which may bring one) frees a slot: no gap.
    onChange: (_machine, c) => {
      waker.wake({
        urgent: c.kind === 'reopened' || (c.kind === 'event' && c.result !== undefined),
      });
    },
  });
  const loop = startOperatorLoop({ ...d, watch }, leadership, o);
  waker.wake = (w) => {
    loop.wake(w);
  };
  return {
    ...loop,
    async stop() {
      await loop.stop();
      await watch.close();
    },
  };
}
