// SPDX-License-Identifier: Apache-2.0
/**
 * Host-side clocks for benchmark P9 (bench/p9.ts). Two sources, each timed on the host:
 * - the VM's serial console: a poller notes the log's size every 50 ms, so any byte of it (a
 *   marker the image prints, the kernel's "Restarting system") gets the host time it appeared at;
 * - the agent's journal events, followed live over its API (reconnecting every 200 ms while the
 *   machine reboots, not with the CLI's back-off, so the new boot's events arrive as they are
 *   written). Each event carries the guest's wall-clock time; the guest's offset from the host,
 *   per boot (the guest reads its RTC at boot, to the second), is the smallest arrival − event
 *   time over that boot's events: the ones that arrived live, a few ms after they were written.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { readSerial, serialSize } from '../src/lab/vm/serial-log.ts';
import type { AgentClient, AgentEvent } from '../src/protocol/index.ts';

const SerialPollMs = 50;
const ReconnectMs = 200;

/** When (host `Date.now()`) bytes of a console log appeared. */
export interface SerialClock {
  /** Host time at which byte `offset` of the log had been written (±{@link SerialPollMs}). */
  at(offset: number): number;
  /** The first match of `pattern` after byte `from` (absolute index), with its host time. */
  find(
    pattern: RegExp,
    from: number,
  ): Promise<{ index: number; end: number; at: number; m: RegExpExecArray } | undefined>;
  stop(): void;
}

export function watchSerial(file: string): SerialClock {
  const marks: { size: number; at: number }[] = [];
  const state = { running: true };
  void (async () => {
    while (state.running) {
      const size = await serialSize(file);
      const last = marks.at(-1);
      if (last === undefined || size > last.size) marks.push({ size, at: Date.now() });
      await sleep(SerialPollMs);
    }
  })();
  return {
    at(offset) {
      const mark = marks.find((x) => x.size > offset);
      if (mark === undefined) throw new Error(`byte ${String(offset)} of ${file} was not seen`);
      return mark.at;
    },
    async find(pattern, from) {
      const text = await readSerial(file, from);
      const m = new RegExp(pattern.source, pattern.flags.replace('g', '')).exec(text);
      if (m === null) return undefined;
      const index = from + m.index;
      return { index, end: index + m[0].length, at: this.at(index), m };
    },
    stop() {
      state.running = false;
    },
  };
}

/** An event and when it reached the host. */
export interface Arrived {
  readonly event: AgentEvent;
  /** Host `Date.now()` at arrival. */
  readonly at: number;
  /** The guest's wall-clock time of the event, ms since the epoch. */
  readonly time: number;
}

/** Where a follower is: the events so far and when it last heard from the agent. */
interface Follow {
  readonly seen: Arrived[];
  /** Host times at which a connection ended without the result (the agent went away). */
  readonly drops: number[];
  lastEventId: string | undefined;
  contact: number;
}

/** One connection's events; true once the result came. */
async function streamOnce(client: AgentClient, operation: string, f: Follow): Promise<boolean> {
  const stream = client.events({
    operation,
    follow: true,
    ...(f.lastEventId !== undefined && { lastEventId: f.lastEventId }),
  });
  for await (const event of stream) {
    const at = Date.now();
    f.contact = at;
    f.lastEventId = `${event.operationId}:${String(event.seq)}`;
    f.seen.push({ event, at, time: Date.parse(event.time) });
    if (event.kind === 'result') return true;
  }
  return false;
}

/**
 * Every event of `operationId` until its result, across the reboot. Gives up after `deadlineMs`
 * without reaching the agent.
 */
export async function followEvents(
  client: AgentClient,
  operationId: string,
  deadlineMs: number,
): Promise<{ events: Arrived[]; drops: number[] }> {
  const f: Follow = { seen: [], drops: [], lastEventId: undefined, contact: Date.now() };
  for (;;) {
    try {
      if (await streamOnce(client, operationId, f)) return { events: f.seen, drops: f.drops };
      f.drops.push(Date.now());
    } catch (e) {
      if (f.contact > (f.drops.at(-1) ?? 0)) f.drops.push(Date.now());
      if (Date.now() - f.contact > deadlineMs)
        throw new Error(`the agent stayed away for ${String(deadlineMs)} ms`, { cause: e });
    }
    await sleep(ReconnectMs); // the machine is rebooting: the next boot's agent is not up yet
  }
}
