// SPDX-License-Identifier: Apache-2.0
/** A counting semaphore: at most `limit` holders at once, the rest wait in FIFO order. */
export class Semaphore {
  private active = 0;
  private readonly waiting: (() => void)[] = [];
  private readonly limit: number;

  constructor(limit: number) {
    this.limit = Math.max(1, limit);
  }

  /** Wait for a slot; call the returned function exactly once to give it back. */
  async acquire(): Promise<() => void> {
    if (this.active >= this.limit) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.active++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiting.shift();
      // Hand the slot straight to the next waiter, so `active` never dips and lets a newcomer jump the queue.
      if (next !== undefined) next();
      else this.active--;
    };
  }
}
