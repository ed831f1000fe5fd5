// SPDX-License-Identifier: Apache-2.0
/** A clock tests move by hand; `sleep` resolves when the clock passes its end. */
import type { Clock } from './clock.ts';

export interface FakeClock extends Clock {
  advance(ms: number): void;
  set(ms: number): void;
}

export function createFakeClock(start = Date.UTC(2026, 10, 22, 12)): FakeClock {
  let now = start;
  let sleepers: { until: number; resolve: () => void }[] = [];
  const wake = (): void => {
    const due = sleepers.filter((s) => s.until <= now);
    sleepers = sleepers.filter((s) => s.until > now);
    for (const s of due) s.resolve();
  };
  return {
    now: () => now,
    sleep(ms: number) {
      return new Promise<void>((resolve) => {
        sleepers.push({ until: now + ms, resolve });
        wake();
      });
    },
    advance(ms: number) {
      now += ms;
      wake();
    },
    set(ms: number) {
      now = ms;
      wake();
    },
  };
}
