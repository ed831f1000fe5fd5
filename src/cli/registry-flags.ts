// SPDX-License-Identifier: Apache-2.0
/** The flags of the commands that talk to a registry (`molt releases …`, `molt dev publish`). */
import { z } from 'zod';
import { ErrorCode, MoltError } from '../core/errors.ts';
import type { Platform, RegistryClientOptions } from '../oci/types.ts';
import { parseFlags, timeoutFlag, type CliEnv } from './flags.ts';
import { outputFormats, type OutputFormat } from './command-options.ts';
import type { CliContext } from '../protocol/cli-config.ts';
import { chooseContext } from './contexts.ts';

const repositoryName =
  /^[a-z0-9]+(?:(?:\.|_|__|-+)[a-z0-9]+)*(?:\/[a-z0-9]+(?:(?:\.|_|__|-+)[a-z0-9]+)*)*$/;

const registrySchema = z.object({
  registry: z.string().min(1, 'is empty'),
  repository: z
    .string()
    .regex(repositoryName, 'is not a valid OCI repository name (lowercase a-z, 0-9, . _ - /)'),
  insecure: z.boolean().default(false),
  username: z.string().optional(),
  password: z.string().optional(),
  tokenRealms: z
    .string()
    .optional()
    .transform((s) =>
      (s ?? '')
        .split(',')
        .map((h) => h.trim())
        .filter((h) => h !== ''),
    ),
  platform: z
    .string()
    .regex(
      /^[a-z0-9]+\/[a-z0-9_]+(?:\/[a-z0-9]+)?$/,
      'must look like linux/amd64 or linux/arm64/v8',
    ),
  timeout: timeoutFlag,
  output: z.enum(outputFormats).default('table'),
});

/** Validated registry flags, ready for {@link createRegistryClient}. */
export interface RegistryFlags {
  readonly client: RegistryClientOptions;
  readonly repository: string;
  readonly platform: Platform;
  readonly output: OutputFormat;
}

/** Flags fall back to the environment variables of the same meaning. */
const envNames = {
  registry: 'MOLT_REGISTRY',
  repository: 'MOLT_REPOSITORY',
  username: 'MOLT_REGISTRY_USERNAME',
  password: 'MOLT_REGISTRY_PASSWORD',
  tokenRealms: 'MOLT_REGISTRY_TOKEN_REALMS',
} as const;

function clientOf(o: z.output<typeof registrySchema>): RegistryClientOptions {
  if ((o.username === undefined) !== (o.password === undefined)) {
    throw new MoltError(ErrorCode.BadFlag, 'give both --username and --password, or neither');
  }
  const credentials =
    o.username !== undefined && o.password !== undefined
      ? { username: o.username, password: o.password }
      : undefined;
  return {
    registry: o.registry,
    insecure: o.insecure,
    timeoutMs: o.timeout,
    ...(credentials && { credentials }),
    ...(o.tokenRealms.length > 0 && { tokenRealms: o.tokenRealms }),
  };
}

/** What a context fills in when neither a flag nor a variable names it. */
export type RegistryDefaults = Pick<CliContext, 'registry' | 'repository' | 'insecure'>;

/**
 * Validate flags, falling back to the environment and then to `defaults` (the context's);
 * bad values raise MOLT_BAD_FLAG.
 */
export function parseRegistryFlags(
  raw: Record<string, unknown>,
  env: CliEnv,
  defaults: RegistryDefaults = {},
): RegistryFlags {
  const merged: Record<string, unknown> = { ...raw };
  for (const [flag, name] of Object.entries(envNames)) merged[flag] = raw[flag] ?? env[name];
  merged['registry'] ??= defaults.registry;
  merged['repository'] ??= defaults.repository;
  // The context's plain HTTP goes with its registry only: not with one a flag or variable named.
  if (merged['registry'] === defaults.registry) merged['insecure'] ??= defaults.insecure;
  if (merged['registry'] === undefined)
    throw new MoltError(ErrorCode.BadFlag, '--registry is required', {
      hint: 'give --registry (or MOLT_REGISTRY), or a context that names one: `molt config set-context NAME --registry HOST`',
    });
  const o = parseFlags(registrySchema, merged);
  const client = clientOf(o);
  const [os = '', architecture = '', variant] = o.platform.split('/');
  return {
    client,
    repository: o.repository,
    platform: { os, architecture, ...(variant !== undefined && { variant }) },
    output: o.output,
  };
}

/** `host[:port]` of a `--registry` value given as a host or a URL (for references and cache keys). */
export function registryHost(registry: string): string {
  return registry.replace(/^[a-z]+:\/\//i, '').replace(/\/+$/, '');
}

/**
 * {@link parseRegistryFlags} with the chosen context's registry defaults (`--context`, else the
 * current one): a lab's `molt releases list` needs no registry typed.
 */
export async function registryFlags(
  raw: Record<string, unknown>,
  env: CliEnv,
): Promise<RegistryFlags> {
  const name = typeof raw['context'] === 'string' ? raw['context'] : undefined;
  const named = (flag: 'registry' | 'repository'): boolean =>
    raw[flag] !== undefined || env[envNames[flag]] !== undefined;
  // A config file is read only when it may fill something: flags alone never depend on it.
  if (name === undefined && named('registry') && named('repository'))
    return parseRegistryFlags(raw, env);
  const chosen = await chooseContext(env, name);
  const c = chosen?.context;
  const defaults = {
    ...(c?.registry !== undefined && { registry: c.registry }),
    ...(c?.repository !== undefined && { repository: c.repository }),
    ...(c?.insecure !== undefined && { insecure: c.insecure }),
  };
  return parseRegistryFlags(raw, env, defaults);
}
