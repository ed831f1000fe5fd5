// SPDX-License-Identifier: Apache-2.0
/**
 * Which context of the CLI config file (docs/adr/0010) a command uses: `--context NAME`, else the
 * file's `currentContext`, else none. Flags and the environment still win field by field
 * (`mtls/connect.ts`); a context only fills what they leave out.
 */
import { ErrorCode, MoltError } from '../protocol/index.ts';
import { requireContext, type CliContext } from '../protocol/cli-config.ts';
import { loadCliConfig } from '../platform/config/cli-config-file.ts';
import type { CliEnv } from './flags.ts';

/** A context picked for a command, and where it was read. */
export interface ChosenContext {
  readonly name: string;
  readonly context: CliContext;
  readonly file: string;
}

/** The context `name` names (the current one when undefined), or undefined when there is none. */
export async function chooseContext(
  env: CliEnv,
  name: string | undefined,
): Promise<ChosenContext | undefined> {
  const { path, config } = await loadCliConfig(env);
  if (name !== undefined) {
    if (path === undefined)
      throw new MoltError(ErrorCode.UnknownContext, `no context ${name}: no CLI config file`, {
        hint: 'set HOME, XDG_CONFIG_HOME or MOLT_CONFIG',
      });
    return { name, context: requireContext(config, name, path), file: path };
  }
  const current = config.currentContext;
  if (current === undefined || path === undefined) return undefined;
  const context = config.contexts[current];
  if (context === undefined)
    throw new MoltError(
      ErrorCode.UnknownContext,
      `the current context ${current} is not in ${path}`,
      {
        hint: 'choose another: `molt config use-context NAME` (`molt config get-contexts` lists them)',
      },
    );
  return { name: current, context, file: path };
}
