// SPDX-License-Identifier: Apache-2.0
/** The flags of the commands that talk to a registry (`molt releases …`, `molt dev publish`). */
import type { Command } from 'commander';
import { z } from 'zod';
import { ErrorCode, MoltError } from '../protocol/index.ts';
import type { Platform, RegistryClientOptions } from '../oci/types.ts';
import { parseFlags, timeoutFlag, type CliEnv } from './flags.ts';
import { outputFormats, type OutputFormat } from './output.ts';

/** Add the flags every registry-facing command shares. Environment variables fill what flags omit. */
export function withRegistryFlags(cmd: Command): Command {
  return cmd
    .option('--registry <host>', 'registry host[:port] or URL (env MOLT_REGISTRY)')
    .option('--repository <name>', 'release repository, e.g. acme/installer (env MOLT_REPOSITORY)')
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

/** Validate flags (falling back to the environment); bad values raise MOLT_BAD_FLAG. */
export function parseRegistryFlags(raw: Record<string, unknown>, env: CliEnv): RegistryFlags {
  const merged: Record<string, unknown> = { ...raw };
  for (const [flag, name] of Object.entries(envNames)) merged[flag] = raw[flag] ?? env[name];
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
