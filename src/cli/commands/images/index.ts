// SPDX-License-Identifier: Apache-2.0
import { Command } from 'commander';
import type { CommandContext } from '../../context.ts';
import { withOperatorFlags } from '../rollout/index.ts';

/** `molt images list|status|rollback|approve`: container images image policies follow (docs/adr/0013), through the operator. */
export function imagesCommand(ctx: CommandContext): Command {
  const images = new Command('images').description(
    'container images the image policies follow (through the operator)',
  );
  images.addCommand(
    withOperatorFlags(new Command('list'))
      .description(
        'every followed workload: the image it runs, whether it is available, and what it would move to',
      )
      .option('--policy <name>', 'only this image policy')
      .action(async (_opts: unknown, cmd: Command) => {
        const { runList } = await import('./run.ts');
        await runList(ctx, cmd.opts());
      }),
  );
  images.addCommand(
    withOperatorFlags(new Command('status'), { wide: true })
      .description(
        'image rollouts, newest first; with ROLLOUT, its workloads: phase, image from → to, the planner’s decision',
      )
      .argument('[rollout]', 'an image rollout, or a unique prefix of its id')
      .option('--policy <name>', 'only this image policy’s rollouts')
      .action(async (id: string | undefined, _opts: unknown, cmd: Command) => {
        const { runStatus } = await import('./status.ts');
        await runStatus(ctx, id, cmd.opts());
      }),
  );
  images.addCommand(
    withOperatorFlags(new Command('rollback'))
      .description(
        'put every workload an image rollout changed back on the image it ran (pause or halt it first)',
      )
      .argument('<rollout>', 'the image rollout to reverse, or a unique prefix of its id')
      .option('--yes', 'do it (without: print what it would put back, and stop)')
      .option('--reason <text>', 'why, for the history')
      .action(async (id: string, _opts: unknown, cmd: Command) => {
        const { runRollback } = await import('./status.ts');
        await runRollback(ctx, id, cmd.opts());
      }),
  );
  images.addCommand(
    withOperatorFlags(new Command('approve'))
      .description('let an image rollout awaiting approval start')
      .argument('<rollout>', 'the image rollout, or a unique prefix of its id')
      .action(async (id: string, _opts: unknown, cmd: Command) => {
        const { runApprove } = await import('./status.ts');
        await runApprove(ctx, id, cmd.opts());
      }),
  );
  return images;
}
