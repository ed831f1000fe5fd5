// SPDX-License-Identifier: Apache-2.0
import { setTimeout as sleep } from 'node:timers/promises';
import { leadershipConformance } from '../../../testkit/leadership-conformance.ts';
import {
  createMemoryLeadership,
  MemoryLeadershipBackend,
  type LeadershipClock,
} from './leadership.ts';

/** A clock moved by hand: `advance` runs the timers that fall due, in order. */
function handClock(): LeadershipClock & { advance(ms: number): void } {
  let now = 0;
  let timers: { readonly at: number; readonly fn: () => void }[] = [];
  return {
    after: (ms, fn) => {
      timers.push({ at: now + ms, fn });
    },
    advance: (ms) => {
      now += ms;
      const due = timers.filter((t) => t.at <= now).sort((x, y) => x.at - y.at);
      timers = timers.filter((t) => t.at > now);
      for (const t of due) t.fn();
    },
  };
}

leadershipConformance({
  name: 'memory, hand clock',
  ttlSeconds: 10,
  start: () => {
    const clock = handClock();
    const backend = new MemoryLeadershipBackend({ clock });
    return Promise.resolve({
      open: (id: string) => createMemoryLeadership(backend, id, { ttlSeconds: 10 }),
      elapse: (seconds: number) => {
        clock.advance(seconds * 1000);
        return Promise.resolve();
      },
      loseClaim: () => {
        backend.loseClaim();
        return Promise.resolve();
      },
      stop: () => Promise.resolve(),
    });
  },
});

// The clock `molt operator` runs on (`store: memory`): a dead leader's claim expires in real time.
leadershipConformance({
  name: 'memory, system clock',
  ttlSeconds: 1,
  start: () => {
    const backend = new MemoryLeadershipBackend();
    return Promise.resolve({
      open: (id: string) => createMemoryLeadership(backend, id, { ttlSeconds: 1 }),
      elapse: (seconds: number) => sleep(seconds * 1000),
      loseClaim: () => {
        backend.loseClaim();
        return Promise.resolve();
      },
      stop: () => Promise.resolve(),
    });
  },
});
