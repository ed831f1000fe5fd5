// SPDX-License-Identifier: Apache-2.0
import { Command } from 'commander';
import type { CommandContext } from '../../context.ts';

const collect = (value: string, previous: string[] | undefined): string[] => [
  ...(previous ?? []),
  value,
];

/** `molt cluster recover`: a cluster's control plane through the agents (docs/adr/0012 §6). */
export function clusterCommand(ctx: CommandContext): Command {
  const cluster = new Command('cluster').description(
    'a cluster’s control plane through its machines’ agents',
  );
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
