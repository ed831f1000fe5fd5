// SPDX-License-Identifier: Apache-2.0
import { Command } from 'commander';
import type { CommandContext } from '../../context.ts';
import { withOutputFlag } from '../../flags.ts';
import { withRegistryFlags } from '../../registry-flags.ts';

/** Flags shared by `releases list` and `releases latest`. */
function withDiscoveryFlags(cmd: Command): Command {
  return withOutputFlag(withRegistryFlags(cmd))
    .option(
      '--public-key <file>',
      'require releases signed by this key (PEM; cosign legacy or bundle)',
    )
    .option('--cache <file>', 'discovery cache file (default: $XDG_CACHE_HOME/molt/releases/…)')
    .option('--no-cache', 'do not read or write the discovery cache');
}

/** `molt releases list|latest`: what the release repository holds and what to run next. */
export function releasesCommand(ctx: CommandContext): Command {
  const releases = new Command('releases').description('discover releases in an OCI registry');
  releases.addCommand(
    withDiscoveryFlags(new Command('list'))
      .description('list releases (newest first), with the tags and labels of each')
      .option('--channel <name>', 'only releases in this channel')
      .option('--all', 'include unofficial releases')
      .action(async (_opts, cmd: Command) => {
        const { runList } = await import('./list.ts');
        await runList(ctx, cmd.opts());
      }),
  );
  releases.addCommand(
    withDiscoveryFlags(new Command('latest'))
      .description('the newest official release in a channel that this machine or cluster can take')
      .option('--channel <name>', 'release channel', 'stable')
      .option(
        '--current <version>',
        'version running now (only releases reachable from it qualify)',
      )
      .option(
        '--kubernetes <version>',
        'cluster Kubernetes version (only compatible releases qualify)',
      )
      .action(async (_opts, cmd: Command) => {
        const { runLatest } = await import('./latest.ts');
        await runLatest(ctx, cmd.opts());
      }),
  );
  return releases;
}
