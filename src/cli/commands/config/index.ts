// SPDX-License-Identifier: Apache-2.0
import { Command } from 'commander';
import type { CommandContext } from '../../context.ts';
import { lazyAction, withOutputFlag } from '../../command-options.ts';
import type * as ConfigRun from './run.ts';

type Run = (ctx: CommandContext, name: string, raw: Record<string, unknown>) => Promise<void>;
const lazy = (ctx: CommandContext, pick: (m: typeof ConfigRun) => Run) =>
  lazyAction(
    () => import('./run.ts'),
    (m, name, flags) => pick(m)(ctx, name ?? '', flags),
  );

/**
 * `molt config get-contexts|current-context|use-context|set-context|delete-context|view`: the
 * CLI's contexts (docs/adr/0010), in `$MOLT_CONFIG`, else `$XDG_CONFIG_HOME/molt/config.yaml`,
 * else `~/.config/molt/config.yaml`.
 */
export function configCommand(ctx: CommandContext): Command {
  const config = new Command('config').description(
    'contexts: which operator molt talks to, with which certificate (like kubectl config)',
  );
  config.addCommand(
    withOutputFlag(new Command('get-contexts'))
      .description('every context; * marks the current one')
      .action(lazy(ctx, (m) => (c, _n, raw) => m.runGetContexts(c, raw))),
  );
  config.addCommand(
    new Command('current-context')
      .description('the name of the current context')
      .action(lazy(ctx, (m) => (c) => m.runCurrentContext(c))),
  );
  config.addCommand(
    new Command('use-context')
      .description('make a context the current one')
      .argument('<name>', 'the context')
      .action(lazy(ctx, (m) => m.runUseContext)),
  );
  config.addCommand(
    new Command('set-context')
      .description('add a context, or change the fields given of an existing one')
      .argument('<name>', 'the context')
      .option('--operator <url>', 'the operator API, https://host:port')
      .option('--cert <file>', 'client certificate, PEM (`molt pki issue`)')
      .option('--key <file>', 'its private key, PEM')
      .option('--ca <file>', 'the fleet CA, PEM')
      .option('--output <format>', 'default -o of commands that connect: table, json or yaml')
      .option('--agent-port <port>', 'reach named machines’ agents at this port')
      .option('--registry <host>', 'the release registry `molt releases …` reads by default')
      .option('--repository <name>', 'the release repository `molt releases …` reads by default')
      .option('--insecure', 'that registry is plain HTTP (a loopback lab)')
      .option('--use', 'also make it the current context')
      .action(lazy(ctx, (m) => m.runSetContext)),
  );
  config.addCommand(
    new Command('delete-context')
      .description('remove a context (the certificate files stay)')
      .argument('<name>', 'the context')
      .action(lazy(ctx, (m) => m.runDeleteContext)),
  );
  config.addCommand(
    withOutputFlag(new Command('view'))
      .description('the config file as molt reads it (YAML unless -o json)')
      .action(lazy(ctx, (m) => (c, _n, raw) => m.runView(c, raw))),
  );
  return config;
}
