// SPDX-License-Identifier: Apache-2.0
/**
 * The CLI config file on disk (docs/adr/0010; its shape is `protocol/cli-config.ts`): found at
 * `$MOLT_CONFIG`, else `$XDG_CONFIG_HOME/molt/config.yaml`, else `~/.config/molt/config.yaml`;
 * a missing file is an empty config. It is written whole, atomically (a new file renamed over
 * the old) and mode 0600 — it names key files, and whoever can change it can point molt at
 * another operator — into a directory made 0700.
 */
import { mkdir, readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { parseDocument, stringify } from 'yaml';
import { ErrorCode, MoltError } from '../../core/errors.ts';
import { CliConfig, emptyCliConfig } from '../../protocol/cli-config.ts';
import { writePrivateFile } from '../fs/private-file.ts';

/** The environment as the config's path depends on it. */
export type ConfigEnv = Readonly<Record<string, string | undefined>>;

/**
 * Where the config lives, or undefined when the environment names no home at all (an in-process
 * test's empty environment: it must never read or write the real one).
 */
export function cliConfigPath(env: ConfigEnv): string | undefined {
  const explicit = env['MOLT_CONFIG'];
  if (explicit !== undefined && explicit !== '') return explicit;
  const xdg = env['XDG_CONFIG_HOME'];
  if (xdg !== undefined && xdg.startsWith('/')) return join(xdg, 'molt', 'config.yaml');
  const home = env['HOME'];
  if (home === undefined || home === '') return undefined;
  return join(home, '.config', 'molt', 'config.yaml');
}

/** A config and the file it came from (or goes to). */
export interface LoadedCliConfig {
  readonly path: string | undefined;
  readonly config: CliConfig;
}

/** Read the config at `path`; missing → empty. A broken file is MOLT_CLI_CONFIG_INVALID naming the field. */
export async function readCliConfig(path: string | undefined): Promise<CliConfig> {
  if (path === undefined) return emptyCliConfig();
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return emptyCliConfig();
    throw new MoltError(ErrorCode.CliConfigInvalid, `cannot read ${path}: ${String(e)}`, {
      cause: e,
      hint: 'check its permissions, or point MOLT_CONFIG at another file',
    });
  }
  const doc = parseDocument(text);
  const yamlError = doc.errors[0];
  if (yamlError !== undefined)
    throw invalid(path, `not YAML: ${yamlError.message.split('\n')[0] ?? ''}`);
  const parsed = CliConfig.safeParse(doc.toJS() ?? {});
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const field = issue?.path.map(String).join('.') || '(top level)';
  throw invalid(path, `${field}: ${issue?.message ?? 'is invalid'}`);
}

const invalid = (path: string, what: string): MoltError =>
  new MoltError(ErrorCode.CliConfigInvalid, `${path}: ${what}`, {
    hint: 'fix the file (`molt config view` shows what molt reads), or remove it and run `molt config set-context` again',
  });

/** Load the config the environment points at. */
export async function loadCliConfig(env: ConfigEnv): Promise<LoadedCliConfig> {
  const path = cliConfigPath(env);
  return { path, config: await readCliConfig(path) };
}

/** Write `config` to `path`: atomically, mode 0600, its directory created 0700. */
export async function writeCliConfig(path: string, config: CliConfig): Promise<void> {
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  const header = '# molt CLI contexts (molt config --help); written by molt\n';
  await writePrivateFile(path, header + stringify(config));
}

/** Read, change with `update`, write back; returns the new config and its path. */
export async function updateCliConfig(
  env: ConfigEnv,
  update: (c: CliConfig, path: string) => CliConfig,
): Promise<{ path: string; config: CliConfig }> {
  const path = cliConfigPath(env);
  if (path === undefined)
    throw new MoltError(ErrorCode.CliConfigInvalid, 'no place for the CLI config file', {
      hint: 'set HOME, XDG_CONFIG_HOME or MOLT_CONFIG',
    });
  const config = update(await readCliConfig(path), path);
  await writeCliConfig(path, config);
  return { path, config };
}
