// SPDX-License-Identifier: Apache-2.0
/** The actions of `molt config …`: read the CLI config file, change it, print. */
import { access } from 'node:fs/promises';
import { resolve } from 'node:path';
import { z } from 'zod';
import { ErrorCode, MoltError, type PrintColumn } from '../../../protocol/index.ts';
import {
  ContextName,
  contextNames,
  deleteContext,
  requireContext,
  setContext,
  type CliConfig,
  type CliContext,
} from '../../../protocol/cli-config.ts';
import {
  cliConfigPath,
  loadCliConfig,
  updateCliConfig,
} from '../../../platform/config/cli-config-file.ts';
import type { CommandContext } from '../../context.ts';
import { parseFlags } from '../../flags.ts';
import { outputFormats, renderData, renderTable } from '../../output.ts';

interface Row extends CliContext {
  readonly name: string;
  readonly current: boolean;
}

const columns: readonly PrintColumn<Row>[] = [
  { header: 'CURRENT', value: (r) => (r.current ? '*' : '') },
  { header: 'NAME', value: (r) => r.name },
  { header: 'OPERATOR', value: (r) => r.operator },
  { header: 'CERT', value: (r) => r.cert },
];

const rowsOf = (c: CliConfig): Row[] =>
  contextNames(c).map((name) => ({
    name,
    current: name === c.currentContext,
    ...(c.contexts[name] as CliContext),
  }));

const output = z.object({ output: z.enum(outputFormats).default('table') });

/** `molt config get-contexts`. */
export async function runGetContexts(
  ctx: CommandContext,
  raw: Record<string, unknown>,
): Promise<void> {
  const o = parseFlags(output, raw);
  const { path, config } = await loadCliConfig(ctx.io.env);
  const rows = rowsOf(config);
  if (o.output !== 'table') ctx.io.out(renderData(o.output, rows));
  else if (rows.length === 0)
    ctx.io.out(
      `no contexts in ${path ?? 'the CLI config'}: \`molt lab up\` writes one, \`molt config set-context\` adds one\n`,
    );
  else ctx.io.out(renderTable(columns, rows));
}

/** `molt config current-context`. */
export async function runCurrentContext(ctx: CommandContext): Promise<void> {
  const { path, config } = await loadCliConfig(ctx.io.env);
  if (config.currentContext === undefined)
    throw new MoltError(
      ErrorCode.UnknownContext,
      `no context is current${path === undefined ? '' : ` in ${path}`}`,
      {
        hint: 'choose one: `molt config use-context NAME` (`molt config get-contexts` lists them)',
      },
    );
  ctx.io.out(`${config.currentContext}\n`);
}

/** `molt config use-context NAME`. */
export async function runUseContext(ctx: CommandContext, name: string): Promise<void> {
  const { config } = await updateCliConfig(ctx.io.env, (c, path) => {
    requireContext(c, name, path);
    return { ...c, currentContext: name };
  });
  ctx.io.out(`current context: ${name} (${config.contexts[name]?.operator ?? ''})\n`);
}

const setSchema = z.object({
  name: ContextName,
  operator: z.string().min(1).optional(),
  cert: z.string().min(1).optional(),
  key: z.string().min(1).optional(),
  ca: z.string().min(1).optional(),
  output: z.enum(outputFormats).optional(),
  agentPort: z.coerce
    .number({ message: 'must be a port number' })
    .int()
    .min(1)
    .max(65535)
    .optional(),
  registry: z.string().min(1).max(300).optional(),
  repository: z.string().min(1).max(300).optional(),
  insecure: z.boolean().optional(),
  use: z.boolean().default(false),
});

/** An absolute path to a file that exists, or MOLT_BAD_FLAG naming the flag. */
async function existingFile(flag: string, file: string | undefined): Promise<string | undefined> {
  if (file === undefined) return undefined;
  const path = resolve(file);
  try {
    await access(path);
  } catch {
    throw new MoltError(ErrorCode.BadFlag, `--${flag} ${file}: no such file`, {
      hint: 'certificates come from `molt pki issue`',
    });
  }
  return path;
}

/** `molt config set-context NAME [--operator URL] [--cert F] [--key F] [--ca F] [--use] …`. */
export async function runSetContext(
  ctx: CommandContext,
  name: string,
  raw: Record<string, unknown>,
): Promise<void> {
  const o = parseFlags(setSchema, { ...raw, name });
  const fields: Partial<CliContext> = Object.fromEntries(
    Object.entries({
      operator: o.operator,
      cert: await existingFile('cert', o.cert),
      key: await existingFile('key', o.key),
      ca: await existingFile('ca', o.ca),
      output: o.output,
      agentPort: o.agentPort,
      registry: o.registry,
      repository: o.repository,
      insecure: o.insecure,
    }).filter(([, v]) => v !== undefined),
  );
  const seen = { created: false };
  const { path, config } = await updateCliConfig(ctx.io.env, (c) => {
    seen.created = c.contexts[name] === undefined;
    const next = setContext(c, name, fields, 'molt config set-context --help');
    const use = o.use || next.currentContext === undefined;
    return use ? { ...next, currentContext: name } : next;
  });
  const current = config.currentContext === name ? '; it is the current context' : '';
  ctx.io.out(`context ${name} ${seen.created ? 'added to' : 'changed in'} ${path}${current}\n`);
}

/** `molt config delete-context NAME`. */
export async function runDeleteContext(ctx: CommandContext, name: string): Promise<void> {
  const seen = { current: false };
  const { path } = await updateCliConfig(ctx.io.env, (c, file) => {
    requireContext(c, name, file);
    seen.current = c.currentContext === name;
    return deleteContext(c, name);
  });
  const note = seen.current ? '; no context is current now (`molt config use-context NAME`)' : '';
  ctx.io.out(`context ${name} deleted from ${path}${note}\n`);
}

/** `molt config view`: the config as molt reads it (an absent file reads as empty). */
export async function runView(ctx: CommandContext, raw: Record<string, unknown>): Promise<void> {
  const o = parseFlags(output, raw);
  const { config } = await loadCliConfig(ctx.io.env);
  if (o.output === 'json') ctx.io.out(renderData('json', config));
  else
    ctx.io.out(
      `# ${cliConfigPath(ctx.io.env) ?? '(no CLI config file)'}\n${renderData('yaml', config)}`,
    );
}
