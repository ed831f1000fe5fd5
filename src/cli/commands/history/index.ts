// SPDX-License-Identifier: Apache-2.0
import { Command } from 'commander';
import type { CommandContext } from '../../context.ts';
import { withOperatorFlags } from '../rollout/index.ts';

/** `molt history [--follow] [--rollout ID] [--machine NAME]`: who did what, from the operator. */
export function historyCommand(ctx: CommandContext): Command {
  return withOperatorFlags(new Command('history'))
    .description('the operator’s history, oldest first: what happened, to which machine, by whom')
    .option('-f, --follow', 'keep printing new events until ctrl-C')
    .option('--rollout <id>', 'only this rollout’s events (a unique prefix of its id will do)')
    .option('--machine <name>', 'only this machine’s events')
    .option('--tail <n>', 'only the last n events (then new ones with --follow)')
    .action(async (_opts, cmd: Command) => {
      const { runHistory } = await import('./run.ts');
      await runHistory(ctx, cmd.opts());
    });
}
