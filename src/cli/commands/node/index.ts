// SPDX-License-Identifier: Apache-2.0
import { Command } from 'commander';
import type { CommandContext } from '../../context.ts';
import { lazy, withAgentFlags, withFollowFlags } from './command-kit.ts';
import { etcdCommand, serviceCommand } from './recovery-commands.ts';

/** `molt node status|upgrade|…|logs|service|etcd`: one machine's agent. */
export function nodeCommand(ctx: CommandContext): Command {
  const node = new Command('node').description('talk to one machine’s agent over mutual TLS');
  node.addCommand(
    withAgentFlags(new Command('status'))
      .description('booted slot, both slots, boot state, operation')
      .action(lazy(ctx, (m) => m.runStatus)),
  );
  node.addCommand(
    withFollowFlags(withAgentFlags(new Command('upgrade')))
      .description('write the installer image to the other slot, boot it once, commit when healthy')
      .option('--image <ref>', 'installer image reference (registry/repo:tag or @sha256:…)')
      .option(
        '--no-preserve',
        'wipe EPHEMERAL (etcd data, workloads) and rejoin etcd as a new member',
      )
      .option(
        '--stage',
        'write and verify the slot now, without arming it: an unplanned reboot keeps the running release; `molt node reboot` applies it',
      )
      .option(
        '--force',
        'allow a 2-member etcd cluster to lose a member, an upgrade to the image already booted, or one of a held machine (admin only)',
      )
      .action(lazy(ctx, (m) => (c, raw) => m.runSubmit(c, 'upgrade', raw))),
  );
  for (const [kind, what] of [
    ['rollback', 'boot the previous slot once and commit it when healthy'],
    ['reboot', 'reboot the machine (applies a staged upgrade, verifying its slot again first)'],
  ] as const) {
    node.addCommand(
      withFollowFlags(withAgentFlags(new Command(kind)))
        .description(what)
        .option('--force', 'override the etcd 2-member rule (admin only)')
        .action(lazy(ctx, (m) => (c, raw) => m.runSubmit(c, kind, raw))),
    );
  }
  node.addCommand(
    withAgentFlags(new Command('hold'))
      .description(
        'refuse upgrades of this machine for a while, direct ones too (rollbacks stay allowed)',
      )
      .option('--reason <text>', 'why (required; shown to whoever tries to upgrade)')
      .option('--for <duration>', 'how long: 30m, 2h, 1d')
      .option('--until <time>', 'until an ISO 8601 time with a zone')
      .action(lazy(ctx, (m) => m.runHold)),
  );
  node.addCommand(
    withAgentFlags(new Command('release'))
      .description('lift the hold set with `molt node hold`')
      .action(lazy(ctx, (m) => m.runRelease)),
  );
  node.addCommand(
    withAgentFlags(new Command('cancel'))
      .description(
        'cancel the running image pull, or discard a staged upgrade; refused once the machine is being changed',
      )
      .action(lazy(ctx, (m) => m.runCancel)),
  );
  node.addCommand(
    withFollowFlags(withAgentFlags(new Command('events')))
      .description('events of an operation (default: the running or latest one)')
      .option('--operation <id>', 'operation id (see `molt node operations`)')
      .action(lazy(ctx, (m) => m.runEvents)),
  );
  node.addCommand(
    withAgentFlags(new Command('operations'))
      .description('operations in the agent’s journal')
      .action(lazy(ctx, (m) => m.runOperations)),
  );
  node.addCommand(
    withAgentFlags(new Command('logs'))
      .description('every journalled event, or with --service a service’s own output')
      .option('--service <name>', 'a service’s output instead (molt node service list)')
      .option('--tail <n>', 'only the last n events (lines; a service’s: 100 by default)')
      .option('--follow', 'keep streaming new events (lines)')
      .action(
        lazy(
          ctx,
          (m) => (c, raw) =>
            raw['service'] === undefined ? m.runLogs(c, raw) : m.runServiceLogs(c, raw),
        ),
      ),
  );
  node.addCommand(serviceCommand(ctx));
  node.addCommand(etcdCommand(ctx));
  return node;
}
