// SPDX-License-Identifier: Apache-2.0
/** The real clock. */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Clock } from './clock.ts';

export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: (ms, signal) => sleep(ms, undefined, signal === undefined ? {} : { signal }),
};
