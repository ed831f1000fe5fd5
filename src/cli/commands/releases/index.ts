// SPDX-License-Identifier: Apache-2.0
import { Command } from 'commander';
import type { CommandContext } from '../../context.ts';
import { withOutputFlag, withRegistryFlags } from '../../command-options.ts';
import { withOperatorFlags } from '../rollout/index.ts';

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

/** `molt releases block|unblock|blocked`: on the operator, which releases a pool must not get. */
function addBlockCommands(releases: Command, ctx: CommandContext): void {
  const arg = (c: Command): Command =>
    c.argument('<release>', 'the release: its digest (sha256:…) or version');
  releases.addCommand(
    withOperatorFlags(arg(new Command('block')))
      .description('never offer a release to a pool (or any pool); pauses rollouts to it')
      .option('--reason <text>', 'why (required; shown in the history and `releases blocked`)')
      .option('--pool <name>', 'only for this pool (default: every pool)')
      .action(async (ref: string, _opts, cmd: Command) => {
        const { runBlock } = await import('./blocks.ts');
        await runBlock(ctx, ref, cmd.opts());
      }),
  );
  releases.addCommand(
    withOperatorFlags(arg(new Command('unblock')))
      .description('lift a block: for one pool, or every block of the release')
      .option('--pool <name>', 'only the block for this pool')
      .action(async (ref: string, _opts, cmd: Command) => {
        const { runUnblock } = await import('./blocks.ts');
        await runUnblock(ctx, ref, cmd.opts());
      }),
  );
  releases.addCommand(
    withOperatorFlags(new Command('blocked'), { wide: true })
      .description('the blocked releases: by whom, why, for which pools')
      .action(async (_opts, cmd: Command) => {
        const { runBlocked } = await import('./blocks.ts');
        await runBlocked(ctx, cmd.opts());
      }),
  );
}

/**
 * `molt releases list|latest` (the registry: what it holds and what to run next) and
 * `block|unblock|blocked` (the operator: what a pool must not get).
 */
export function releasesCommand(ctx: CommandContext): Command {
  const releases = new Command('releases').description(
    'discover releases in an OCI registry; block them on the operator',
  );
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
  addBlockCommands(releases, ctx);
  return releases;
}
