// SPDX-License-Identifier: Apache-2.0
/** The timer of the operator's periodic image passes (GM checks, pinned images). */

/** Stops the passes; resolves once a pass in flight has ended. */
export interface Periodic {
  stop(): Promise<void>;
}

/**
 * `pass` at once, then `everyMs` after each pass ends (never two at a time), until stopped. `pass`
 * handles its own failures: a rejection would surface from `stop`.
 */
export function every(everyMs: number, pass: () => Promise<void>): Periodic {
  let stopped = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let running: Promise<void> = Promise.resolve();
  const schedule = (ms: number): void => {
    timer = setTimeout(() => {
      running = pass().finally(() => {
        if (!stopped) schedule(everyMs);
      });
    }, ms);
  };
  schedule(0);
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
