// SPDX-License-Identifier: Apache-2.0
import { Command } from 'commander';
import type { CommandContext } from '../../context.ts';
import { withOutputFlag } from '../../flags.ts';

/** `molt plan`: what the operator would do now with a fleet file, and when the rest follows. */
export function planCommand(ctx: CommandContext): Command {
  return withOutputFlag(new Command('plan'))
    .description('show which machines a fleet file lets start now, and the predicted schedule')
    .requiredOption(
      '--fleet <file>',
      'fleet file (YAML or JSON): machines, pools, policies, rollouts',
    )
    .option('--at <time>', 'plan at this ISO 8601 time instead of now (e.g. 2026-11-23T10:00:00Z)')
    .option('--upgrade-minutes <n>', 'how long one machine upgrade is assumed to take', '10')
    .option('--horizon <duration>', 'how far ahead the schedule is predicted (e.g. 12h, 7d)', '7d')
    .action(async (_opts, cmd: Command) => {
      const { runPlan } = await import('./run.ts');
      await runPlan(ctx, cmd.opts());
    });
}
