// SPDX-License-Identifier: Apache-2.0
/**
 * The reconcile pass duration as a Prometheus histogram (`molt_operator_reconcile_pass_duration_seconds`):
 * the last pass's gauge says nothing about the slow pass a scrape missed, and a fleet's pass time
 * grows with its machine count (every pass asks every agent for its status), so an alert on
 * `histogram_quantile(0.99, …)` is how a user sees the operator falling behind (benchmark R1).
 */

/** Upper bounds in seconds: a small fleet's pass takes milliseconds, a large one's seconds. */
export const passBucketsSeconds: readonly number[] = [
  0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60,
];

/** Cumulative bucket counts, sum and count, as the exposition format wants them. */
export class PassHistogram {
  /** Observations ≤ each bound of {@link passBucketsSeconds}, in order (not yet cumulative). */
  readonly #counts = passBucketsSeconds.map(() => 0);
  #sum = 0;
  #count = 0;

  observe(durationMs: number): void {
    const seconds = durationMs / 1000;
    const i = passBucketsSeconds.findIndex((le) => seconds <= le);
    if (i !== -1) this.#counts[i] = (this.#counts[i] ?? 0) + 1;
    this.#sum += seconds;
    this.#count++;
  }

  /** The family's sample lines: `_bucket{le="…"}` (cumulative, `+Inf` last), `_sum`, `_count`. */
  lines(name: string): string[] {
    let running = 0;
    const buckets = passBucketsSeconds.map((le, i) => {
      running += this.#counts[i] ?? 0;
      return `${name}_bucket{le="${String(le)}"} ${String(running)}`;
    });
    return [
      ...buckets,
      `${name}_bucket{le="+Inf"} ${String(this.#count)}`,
      `${name}_sum ${String(this.#sum)}`,
      `${name}_count ${String(this.#count)}`,
    ];
  }
}
