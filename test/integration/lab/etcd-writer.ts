// SPDX-License-Identifier: Apache-2.0
// A client that keeps writing to etcd (one etcd3 client over every member's endpoint) while the
// control plane is upgraded: it records when each write succeeded or failed, so a test can show
// the cluster kept serving, and which keys it must find again afterwards.
import { setTimeout as sleep } from 'node:timers/promises';
import { noop } from 'cockatiel';
import { Etcd3 } from 'etcd3';

export interface WriterReport {
  readonly startedAt: number;
  readonly stoppedAt: number;
  /** performance.now() of every successful write. */
  readonly successes: readonly number[];
  readonly failures: number;
  /** Keys whose write was acknowledged, with their values. */
  readonly written: ReadonlyMap<string, string>;
  /** One-second windows from the start without a successful write (ms offsets of their starts). */
  readonly silentSeconds: readonly number[];
  readonly lastError: string | undefined;
}

export interface EtcdWriter {
  stop(): Promise<WriterReport>;
}

/** Write `<prefix><n>` every `everyMs` through `endpoints` until stopped. */
export function startEtcdWriter(
  endpoints: readonly string[],
  prefix: string,
  everyMs = 50,
): EtcdWriter {
  // No per-member circuit breaker (etcd3's default refuses a member for 5 s after 3 failures, and
  // can refuse them all at once): this client measures whether the cluster serves, not the client.
  const client = new Etcd3({
    hosts: [...endpoints],
    dialTimeout: 1_000,
    faultHandling: { host: () => noop },
  });
  const startedAt = performance.now();
  const successes: number[] = [];
  const written = new Map<string, string>();
  let failures = 0;
  let lastError: string | undefined;
  const control = { running: true };
  const loop = (async () => {
    for (let n = 0; control.running; n++) {
      const key = `${prefix}${String(n).padStart(6, '0')}`;
      const value = `v${n}`;
      try {
        await client
          .put(key)
          .value(value)
          .options({ deadline: Date.now() + 1_000 })
          .exec();
        successes.push(performance.now());
        written.set(key, value);
      } catch (e) {
        failures++;
        lastError = e instanceof Error ? e.message : String(e);
      }
      await sleep(everyMs);
    }
  })();
  return {
    async stop() {
      control.running = false;
      await loop;
      client.close();
      const stoppedAt = performance.now();
      return {
        startedAt,
        stoppedAt,
        successes,
        failures,
        written,
        silentSeconds: silentSeconds(startedAt, stoppedAt, successes),
        lastError,
      };
    },
  };
}

function silentSeconds(start: number, end: number, successes: readonly number[]): number[] {
  const silent: number[] = [];
  for (let t = start; t + 1_000 <= end; t += 1_000) {
    if (!successes.some((s) => s >= t && s < t + 1_000)) silent.push(Math.round(t - start));
  }
  return silent;
}
