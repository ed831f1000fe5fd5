// SPDX-License-Identifier: Apache-2.0
/**
 * Runs the named health checks until all pass or the deadline passes. A check that throws counts
 * as failing (its message is kept), so one broken probe cannot hang the commit decision.
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

export async function waitHealthy(
  checks: readonly HealthCheck[],
  clock: Clock,
  deadline: number,
  report: (results: readonly HealthResult[]) => void,
): Promise<readonly HealthResult[]> {
  for (;;) {
    const controller = new AbortController();
    const results = await Promise.all(checks.map((c) => runOne(c, controller.signal)));
    report(results);
    const failing = results.filter((r) => r.status === 'failing');
    if (failing.length === 0) return results;
    const left = deadline - clock.now();
    if (left <= 0) {
      throw new MoltError(
        ErrorCode.HealthDeadline,
        `not healthy by the deadline: ${failing.map((r) => `${r.name} (${r.message})`).join('; ')}`,
      );
    }
    await clock.sleep(Math.min(PollMs, left));
  }
}
