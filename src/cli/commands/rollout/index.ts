// SPDX-License-Identifier: Apache-2.0
import { Command } from 'commander';
import type { CommandContext } from '../../context.ts';
import { lazyAction, withOutputFlag } from '../../command-options.ts';
import type * as RolloutRun from './run.ts';

/**
 * Flags every command that talks to the operator API shares (`molt rollout`, `molt machine`, …);
 * `wide` offers `-o wide`. Each flag falls back to its environment variable, then to the context.
 */
export function withOperatorFlags(cmd: Command, o: { wide?: boolean } = {}): Command {
  return withOutputFlag(cmd, { contextDefault: true, ...o })
    .option('--context <name>', 'the context of the CLI config to use (default: the current one)')
    .option('--endpoint <url>', 'the operator API, https://host:port (env MOLT_OPERATOR)')
    .option('--cert <file>', 'client certificate, PEM (env MOLT_CERT)')
    .option('--key <file>', 'client private key, PEM (env MOLT_KEY)')
    .option('--ca <file>', 'fleet CA that issued the operator’s certificate (env MOLT_CA)')
    .option('--timeout <ms>', 'per-request timeout in milliseconds', '30000');
}

type Run = (ctx: CommandContext, id: string, raw: Record<string, unknown>) => Promise<void>;
const lazy = (ctx: CommandContext, pick: (m: typeof RolloutRun) => Run) =>
  lazyAction(
    () => import('./run.ts'),
    (m, id, flags) => pick(m)(ctx, id ?? '', flags),
  );

/** `molt rollout list|status|pause|resume|approve|cancel|rollback`: rollouts on the operator. */
export function rolloutCommand(ctx: CommandContext): Command {
  const rollout = new Command('rollout').description('rollouts on the operator (mutual TLS)');
  rollout.addCommand(
    withOperatorFlags(new Command('list'), { wide: true })
      .description('every rollout, oldest first, with its progress')
      .option('-w, --watch', 'print the list again whenever it changes, until ctrl-C')
      .action(lazy(ctx, (m) => (c, _id, raw) => m.runList(c, raw))),
  );
  rollout.addCommand(
    withOperatorFlags(new Command('status'))
      .description('one rollout and its machines')
      .argument('<id>', 'the rollout, or a unique prefix of its id (see `molt rollout list`)')
      .option('--follow', 'print its history live and its progress until it completes or halts')
      .option(
        '--reconnect-timeout <ms>',
        'give up after the operator is unreachable this long',
        '600000',
      )
      .action(lazy(ctx, (m) => m.runStatus)),
  );
  rollout.addCommand(
    withOperatorFlags(new Command('pause'))
      .description('start no more machines (machines in flight finish)')
      .argument('<id>', 'the rollout, or a unique prefix of its id')
      .option('--reason <text>', 'why, for the history')
      .action(lazy(ctx, (m) => (c, id, raw) => m.runAction(c, 'pause', id, raw))),
  );
  rollout.addCommand(
    withOperatorFlags(new Command('resume'))
      .description('resume a paused rollout')
      .argument('<id>', 'the rollout, or a unique prefix of its id')
      .option('--reason <text>', 'why, for the history')
      .option('--force', 'resume a halted rollout, retrying its failed machines (admin only)')
      .action(lazy(ctx, (m) => (c, id, raw) => m.runAction(c, 'resume', id, raw))),
  );
  rollout.addCommand(
    withOperatorFlags(new Command('approve'))
      .description('let a rollout awaiting approval start')
      .argument('<id>', 'the rollout, or a unique prefix of its id')
      .option('--reason <text>', 'why, for the history')
      .action(lazy(ctx, (m) => (c, id, raw) => m.runAction(c, 'approve', id, raw))),
  );
  rollout.addCommand(
    withOperatorFlags(new Command('cancel'))
      .description(
        'end a rollout for good: machines in flight finish, none start, its release is not offered to the pool again',
      )
      .argument('<id>', 'the rollout, or a unique prefix of its id')
      .option('--reason <text>', 'why, for the history')
      .action(lazy(ctx, (m) => (c, id, raw) => m.runAction(c, 'cancel', id, raw))),
  );
  rollout.addCommand(
    withOperatorFlags(new Command('rollback'))
      .description(
        'roll the pool back to the release it ran before, under the same policies (a rollout that still runs: pause it first)',
      )
      .argument('<id>', 'the rollout to reverse, or a unique prefix of its id')
      .option('--yes', 'do it (without: print what it would do, and stop)')
      .option('--reason <text>', 'why, for the history')
      .action(lazy(ctx, (m) => (c, id, raw) => m.runAction(c, 'rollback', id, raw))),
  );
  return rollout;
}
