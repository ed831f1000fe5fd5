// SPDX-License-Identifier: Apache-2.0
/**
 * `molt plan` without `--fleet`: the live operator's plan (`GET /v1/plan?explain`) — what it
 * starts next, why each other machine waits (every check that refuses it), each rollout's verdict
 * and where each pool goes next — on the operator's own state and observations.
 */
import type { CommandContext } from '../../context.ts';
import { renderData } from '../../output.ts';
import { withOperator } from '../rollout/run.ts';
import { describeLivePlan } from './live-view.ts';

/** Ask the operator for its plan and print it. */
export function runLivePlan(ctx: CommandContext, raw: Record<string, unknown>): Promise<void> {
  return withOperator(ctx, raw, async ({ client, output }) => {
    const [plan, rollouts] = await Promise.all([client.plan({ explain: true }), client.rollouts()]);
    ctx.io.out(
      output === 'table'
        ? describeLivePlan({ operator: client.baseUrl, plan, rollouts })
        : renderData(output, plan),
    );
  });
}
