// SPDX-License-Identifier: Apache-2.0
/**
 * The options the command tree declares, with commander alone: building the tree (`molt --help`,
 * `--version`, completion) then loads neither zod nor yaml, which a verb's own module loads when it
 * runs (benchmark P16).
 */
import { Option, type Command } from 'commander';

/** Output formats every molt command accepts through `-o`. */
export const outputFormats = ['table', 'json', 'yaml'] as const;
export type OutputFormat = (typeof outputFormats)[number];

/** Options of {@link withOutputFlag}. */
export interface OutputFlagOptions {
  /** Also offer `-o wide`: the table with more columns. */
  readonly wide?: boolean;
  /**
   * No commander default: a command that connects takes the default from its context's `output`
   * (`mtls/connect.ts`), else `table`.
   */
  readonly contextDefault?: boolean;
}

/** Add `-o table|json|yaml` (and `wide` where a list has more columns). */
export function withOutputFlag(cmd: Command, o: OutputFlagOptions = {}): Command {
  const option = new Option(
    '-o, --output <format>',
    o.contextDefault === true
      ? 'output format (default: the context’s, else table)'
      : 'output format',
  ).choices(o.wide === true ? [...outputFormats, 'wide'] : outputFormats);
  return cmd.addOption(o.contextDefault === true ? option : option.default('table'));
}

/** Add the flags every registry-facing command shares. Environment variables fill what flags omit. */
export function withRegistryFlags(cmd: Command): Command {
  return cmd
    .option(
      '--registry <host>',
      'registry host[:port] or URL (env MOLT_REGISTRY, else the context’s)',
    )
    .option(
      '--repository <name>',
      'release repository, e.g. acme/installer (env MOLT_REPOSITORY, else the context’s)',
    )
    .option('--context <name>', 'the context of the CLI config to use (default: the current one)')
    .option('--insecure', 'allow plain HTTP and unverified TLS (loopback registries)')
    .option('--username <name>', 'registry user (env MOLT_REGISTRY_USERNAME)')
    .option('--password <secret>', 'registry password or token (env MOLT_REGISTRY_PASSWORD)')
    .option(
      '--token-realms <hosts>',
      "token-service hosts besides the registry's own that may receive the password over https, comma-separated, e.g. auth.docker.io (env MOLT_REGISTRY_TOKEN_REALMS)",
    )
    .option('--platform <os/arch>', 'platform of multi-platform releases', 'linux/amd64')
    .option('--timeout <ms>', 'per-request timeout in milliseconds', '30000');
}

/**
 * A verb's action that imports the verb's module only when it runs (the tree stays commander
 * alone): `run` gets the module, the first positional argument, if any, and the flags.
 */
export const lazyAction =
  <M>(
    load: () => Promise<M>,
    run: (m: M, first: string | undefined, flags: Record<string, unknown>) => Promise<void>,
  ) =>
  async (...args: unknown[]): Promise<void> => {
    const m = await load();
    const cmd = args.at(-1) as Command;
    await run(m, typeof args[0] === 'string' ? args[0] : undefined, cmd.opts());
  };
