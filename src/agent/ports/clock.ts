// SPDX-License-Identifier: Apache-2.0
/** Time for the runner; a fake clock drives the deadline tests. */
export interface Clock {
  now(): number;
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}
