// SPDX-License-Identifier: Apache-2.0
import { Command } from 'commander';
import { lazyAction } from '../../command-options.ts';
import type { CommandContext } from '../../context.ts';
import { withOperatorFlags } from '../rollout/index.ts';
import type * as Run from './run.ts';

type Action = (ctx: CommandContext, raw: Record<string, unknown>) => Promise<void>;
const lazy = (ctx: CommandContext, pick: (m: typeof Run) => Action) =>
  lazyAction(
    () => import('./run.ts'),
    (m, _first, flags) => pick(m)(ctx, flags),
  );

/** `--cluster` (every `molt cluster kubernetes` verb). */
const withCluster = (cmd: Command): Command =>
  withOperatorFlags(cmd).option(
    '--cluster <name>',
    'the cluster (a machine’s `cluster` in the fleet file)',
    'default',
  );

/** `molt cluster kubernetes upgrade|status|finalize|rollback` (docs/adr/0012). */
function kubernetesCommand(ctx: CommandContext): Command {
  const k = new Command('kubernetes').description(
    "the cluster's Kubernetes control plane: version, recorded plans (through the operator)",
  );
  k.addCommand(
    withCluster(new Command('upgrade'))
      .description(
        'move the control plane to a version (up one minor, a patch up or down, or a minor back inside the emulation window); it becomes the desired version',
      )
      .requiredOption('--to <version>', 'the Kubernetes version, like v1.36.3')
      .option('--dry-run', 'print the checks and the steps; change nothing')
      .option('--follow', 'print the plan’s steps as they run until it ends')
      .action(lazy(ctx, (m) => m.runUpgrade)),
  );
  k.addCommand(
    withCluster(new Command('status'))
      .description(
        'every control-plane machine × component (version, emulation, health) and the latest plan',
      )
      .action(lazy(ctx, (m) => m.runStatus)),
  );
  k.addCommand(
    withCluster(new Command('finalize'))
      .description('drop the emulated version of the last minor upgrade: the point of no return')
      .option('--dry-run', 'print the checks and the steps; change nothing')
      .option('--follow', 'print the plan’s steps as they run until it ends')
      .action(lazy(ctx, (m) => m.runFinalize)),
  );
  k.addCommand(
    withCluster(new Command('rollback'))
      .description(
        'undo the plan in progress in reverse, or reverse the last plan that succeeded back to its recorded from',
      )
      .option('--reason <text>', 'why, for the history')
      .option('--dry-run', 'print the steps; change nothing')
      .option('--follow', 'print the plan’s steps as they run until it ends')
      .action(lazy(ctx, (m) => m.runRollback)),
  );
  return k;
}

const collect = (value: string, previous: string[] | undefined): string[] => [
  ...(previous ?? []),
  value,
];

/** `molt cluster …`: a cluster as a whole — its Kubernetes through the operator, recovery through the agents. */
export function clusterCommand(ctx: CommandContext): Command {
  const cluster = new Command('cluster').description(
    'a cluster as a whole: its Kubernetes (through the operator), recovery (through the agents)',
  );
  cluster.addCommand(kubernetesCommand(ctx));
  cluster.addCommand(
    new Command('recover')
      .description(
        'restore etcd from a snapshot on the first machine, rejoin the others one at a time (admin only)',
      )
      .option('--etcd-snapshot <file>', 'the snapshot (molt node etcd snapshot --output FILE)')
      .option(
        '--machine <name|url>',
        'a control-plane machine by name (through the operator) or agent URL; repeat, first is restored',
        collect,
      )
      .option('--rejoin-timeout <ms>', 'how long each machine may take to become a voter', '300000')
      .option('--context <name>', 'the context of the CLI config to use (default: the current one)')
      .option('--operator <url>', 'the operator that finds named machines (env MOLT_OPERATOR)')
      .option('--cert <file>', 'client certificate, PEM (env MOLT_CERT)')
      .option('--key <file>', 'client private key, PEM (env MOLT_KEY)')
      .option('--ca <file>', 'fleet CA that issued the agents’ certificates (env MOLT_CA)')
      .option(
        '--timeout <ms>',
        'per-request timeout: a restore waits for etcd and the components',
        '600000',
      )
      .action(async (_opts: unknown, cmd: Command) => {
        const { runRecover } = await import('./recover.ts');
        await runRecover(ctx, cmd.opts());
      }),
  );
  return cluster;
}
