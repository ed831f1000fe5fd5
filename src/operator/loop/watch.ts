// SPDX-License-Identifier: Apache-2.0
/**
 * Following every managed machine's agent (docs/adr/0005 §4, "Following agents"). One follower per
 * machine keeps its live event stream open and reconnects with backoff (0.5 s doubling to 10 s)
 * when the stream ends — which it does on every reboot. A `phase` or `result` event, and a stream
 * that is lost, are reported through `onChange`, which the composition root points at the loop's
 * `wake()`: the operator reacts to a machine's progress within a pass, not a poll period later.
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

/** What a follower reports: an event that changes what the operator should do, or a lost stream. */
export type WatchChange =
  | { readonly kind: 'event'; readonly phase: string; readonly result?: string }
  | { readonly kind: 'lost'; readonly error: string };

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
  /** First reconnect delay; doubles to 20× on repeated failures. @default 500 */
  readonly retryMs?: number;
}

interface Follower {
  readonly endpoint: string;
  readonly stop: AbortController;
  readonly done: Promise<void>;
  readonly state: { open: boolean; changes: number };
}

const describe = (e: unknown): string => (e instanceof Error ? e.message : String(e));

async function follow(
  source: AgentEventSource,
  machine: MachineRecord,
  f: { readonly signal: AbortSignal; readonly state: Follower['state'] },
  o: WatchOptions,
): Promise<void> {
  const { signal, state } = f;
  const first = o.retryMs ?? 500;
  let wait = first;
  // A function, not a property read: the abort happens while this awaits.
  const stopped = (): boolean => signal.aborted;
  const report = (e: AgentEvent): void => {
    wait = first;
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
    };
    try {
      for await (const e of source.follow(machine, signal, opened)) report(e);
    } catch (e) {
      lost = describe(e);
    }
    state.open = false;
    state.changes++;
    if (stopped()) return;
    o.onChange(machine.id, { kind: 'lost', error: lost });
    await sleep(wait, undefined, { signal }).catch(() => undefined);
    wait = Math.min(wait * 2, first * 20);
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
  const waker = { wake: (): void => undefined };
  const watch = startMachineWatch(events, {
    onChange: () => {
      waker.wake();
    },
  });
  const loop = startOperatorLoop({ ...d, watch }, leadership, o);
  waker.wake = () => {
    loop.wake();
  };
  return {
    ...loop,
    async stop() {
      await loop.stop();
      await watch.close();
    },
  };
}
