// SPDX-License-Identifier: Apache-2.0
/**
 * Runs the named health checks until all pass or the deadline passes. A check that throws counts
 * as failing (its message is kept), and a round that has not answered by the deadline is aborted,
 * so neither a broken nor a hanging probe can keep a trial slot from being committed or rolled back.
 */
import { ErrorCode, MoltError } from '../../core/errors.ts';
import type { Clock } from '../ports/clock.ts';
import type { HealthCheck, HealthResult } from '../ports/health-check.ts';

const PollMs = 1000;

async function runOne(check: HealthCheck, signal: AbortSignal): Promise<HealthResult> {
  try {
    return await check.run(signal);
  } catch (error) {
    return { name: check.name, status: 'failing', message: (error as Error).message };
  }
}

/** One round of every check, or undefined when the deadline came first (the round is aborted). */
async function round(
  checks: readonly HealthCheck[],
  clock: Clock,
  deadline: number,
): Promise<readonly HealthResult[] | undefined> {
  const controller = new AbortController();
  const timer = new AbortController();
  const expired = clock.sleep(Math.max(0, deadline - clock.now()), timer.signal).then(
    () => undefined,
    () => undefined,
  );
  try {
    return await Promise.race([
      Promise.all(checks.map((c) => runOne(c, controller.signal))),
      expired,
    ]);
  } finally {
    controller.abort();
    timer.abort();
  }
}

function failingText(results: readonly HealthResult[]): string {
  return results
    .filter((r) => r.status === 'failing')
    .map((r) => `${r.name} (${r.message})`)
    .join('; ');
}

export async function waitHealthy(
  checks: readonly HealthCheck[],
  clock: Clock,
  deadline: number,
  report: (results: readonly HealthResult[]) => void,
): Promise<readonly HealthResult[]> {
  let last: readonly HealthResult[] = [];
  for (;;) {
    const results = deadline > clock.now() ? await round(checks, clock, deadline) : undefined;
    if (results === undefined) {
      const why =
        last.length > 0
          ? failingText(last)
          : `no answer from ${checks.map((c) => c.name).join(', ')}`;
      throw new MoltError(ErrorCode.HealthDeadline, `not healthy by the deadline: ${why}`);
    }
    report(results);
    last = results;
    if (results.every((r) => r.status !== 'failing')) return results;
    const left = deadline - clock.now();
    if (left <= 0)
      throw new MoltError(
        ErrorCode.HealthDeadline,
        `not healthy by the deadline: ${failingText(results)}`,
      );
    await clock.sleep(Math.min(PollMs, left));
  }
}
