// SPDX-License-Identifier: Apache-2.0
import { Command } from 'commander';
import type { CommandContext } from '../../context.ts';
import { withOperatorFlags } from '../rollout/index.ts';

/**
 * `molt plan`: what the operator does next and why each machine waits — asked of the live
 * operator, or computed offline from a fleet file (`--fleet`) with a predicted schedule.
 */
export function planCommand(ctx: CommandContext): Command {
  return withOperatorFlags(new Command('plan'))
    .description(
      'what the operator does next and why each machine waits (--fleet: offline, predicted)',
    )
    .option(
      '--fleet <file>',
      'plan offline from this fleet file (YAML or JSON): machines, pools, policies, rollouts',
    )
    .option(
      '--state <file>',
      "with --fleet: the fleet's observed state (each machine's release, holds, rollouts so far)",
    )
    .option('--at <time>', 'with --fleet: plan at this ISO 8601 time instead of now')
    .option('--upgrade-minutes <n>', 'with --fleet: how long one machine upgrade takes (10)')
    .option('--horizon <duration>', 'with --fleet: how far ahead to predict (7d)')
    .action(async (_opts, cmd: Command) => {
      const { runPlan } = await import('./run.ts');
      await runPlan(ctx, cmd.opts());
    });
}
