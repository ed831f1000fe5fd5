// SPDX-License-Identifier: Apache-2.0
/** What every `molt node` command is built with: the agent's flags and a lazily loaded action. */
import type { Command } from 'commander';
import type { CommandContext } from '../../context.ts';
import { lazyAction, withOutputFlag } from '../../command-options.ts';
import type * as NodeRun from './run.ts';

/**
 * Flags every `molt node` command shares: the machine by name (found in the operator's inventory)
 * or its agent by `--endpoint`; certificates by flag, environment or context; `-o` unless the
 * command has its own `--output` (`molt node etcd snapshot --output FILE`); a longer `--timeout`
 * where the agent answers only once a long step is done (`molt node etcd rejoin`).
 */
export function withAgentFlags(
  cmd: Command,
  o: { output?: boolean; timeoutMs?: number } = {},
): Command {
  return (o.output === false ? cmd : withOutputFlag(cmd, { contextDefault: true }))
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
    .option('--timeout <ms>', 'per-request timeout in milliseconds', String(o.timeoutMs ?? 30_000));
}

/** Flags of commands that can follow an operation to its result. */
export function withFollowFlags(cmd: Command): Command {
  return cmd
    .option('--follow', 'stream the operation’s events until its result, across reboots')
    .option(
      '--reconnect-timeout <ms>',
      'give up following after the agent is unreachable this long',
      '600000',
    );
}

export type Run = (ctx: CommandContext, raw: Record<string, unknown>) => Promise<void>;
/** The action: the machine argument joins the flags as `machine`. */
export const lazy = (
  ctx: CommandContext,
  pick: (m: typeof NodeRun) => Run,
): ((...args: unknown[]) => Promise<void>) =>
  lazyAction(
    () => import('./run.ts'),
    (m, machine, flags) => pick(m)(ctx, { ...flags, ...(machine !== undefined && { machine }) }),
  );
