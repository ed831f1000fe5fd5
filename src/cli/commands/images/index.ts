// SPDX-License-Identifier: Apache-2.0
import { Command } from 'commander';
import type { CommandContext } from '../../context.ts';
import { withOperatorFlags } from '../rollout/index.ts';

/** `molt images list`: container images image policies follow (docs/adr/0013), through the operator. */
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
  return images;
}
