// SPDX-License-Identifier: Apache-2.0
import { Command } from 'commander';
import type { CommandContext } from '../../context.ts';
import type * as NodeRun from './run.ts';
import { withOutputFlag } from '../../flags.ts';

/**
 * Flags every `molt node` command shares: the machine by name (found in the operator's inventory)
 * or its agent by `--endpoint`; certificates by flag, environment or context.
 */
function withAgentFlags(cmd: Command): Command {
  return withOutputFlag(cmd, { contextDefault: true })
    .argument(
      '[machine]',
      'the machine by name, found through the operator (instead of --endpoint)',
    )
    .option('--context <name>', 'the context of the CLI config to use (default: the current one)')
    .option('--endpoint <url>', 'the agent, https://host:port (env MOLT_ENDPOINT)')
    .option(
      '--operator <url>',
      'the operator that finds a named machine (env MOLT_OPERATOR; default: the context’s)',
    )
    .option('--cert <file>', 'client certificate, PEM (env MOLT_CERT)')
    .option('--key <file>', 'client private key, PEM (env MOLT_KEY)')
    .option('--ca <file>', 'fleet CA that issued the agent’s certificate (env MOLT_CA)')
    .option('--timeout <ms>', 'per-request timeout in milliseconds', '30000');
}

/** Flags of commands that can follow an operation to its result. */
function withFollowFlags(cmd: Command): Command {
  return cmd
    .option('--follow', 'stream the operation’s events until its result, across reboots')
    .option(
      '--reconnect-timeout <ms>',
      'give up following after the agent is unreachable this long',
      '600000',
    );
}

type Run = (ctx: CommandContext, raw: Record<string, unknown>) => Promise<void>;
/** The action: the machine argument joins the flags as `machine`. */
const lazy =
  (ctx: CommandContext, pick: (m: typeof NodeRun) => Run) =>
  async (...args: unknown[]): Promise<void> => {
    const m = await import('./run.ts');
    const cmd = args.at(-1) as Command;
    const machine = typeof args[0] === 'string' ? { machine: args[0] } : {};
    await pick(m)(ctx, { ...cmd.opts(), ...machine });
  };

/** `molt node status|upgrade|rollback|reboot|hold|release|cancel|events|operations|logs`: one machine's agent. */
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
      .option('--stage', 'write the slot now, switch at the next reboot')
      .option(
        '--force',
        'allow a 2-member etcd cluster to lose a member, an upgrade to the image already booted, or one of a held machine (admin only)',
      )
      .action(lazy(ctx, (m) => (c, raw) => m.runSubmit(c, 'upgrade', raw))),
  );
  for (const [kind, what] of [
    ['rollback', 'boot the previous slot once and commit it when healthy'],
    ['reboot', 'reboot the machine (completes a staged upgrade)'],
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
      .description('cancel the running image pull; refused once the machine is being changed')
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
      .description('every journalled event')
      .option('--tail <n>', 'only the last n events')
      .option('--follow', 'keep streaming new events')
      .action(lazy(ctx, (m) => m.runLogs)),
  );
  return node;
}
