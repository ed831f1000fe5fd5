// SPDX-License-Identifier: Apache-2.0
import { z } from 'zod';
import { ErrorCode } from '../../../protocol/index.ts';
import type { SkippedTag } from '../../../core/releases/release.ts';
import { parseChannel } from '../../../core/releases/index.ts';
import { createRegistryClient } from '../../../oci/index.ts';
import {
  discoverReleases,
  FileReleaseCache,
  InMemoryReleaseCache,
  defaultCachePath,
} from '../../../releases/index.ts';
import type { CommandContext } from '../../context.ts';
import { parseFlags, readPublicKey } from '../../flags.ts';
import { registryFlags, type RegistryFlags } from '../../registry-flags.ts';

const discoverySchema = z.object({
  publicKey: z.string().optional(),
  cache: z.union([z.string().min(1), z.literal(false)]).optional(),
  // Channel labels are case-insensitive (core's parseChannel); bad names raise MOLT_INVALID_CHANNEL.
  channel: z
    .string()
    .transform((c) => parseChannel(c))
    .optional(),
});

/** What a discovery command ran and found. */
export interface DiscoveryRun {
  readonly flags: RegistryFlags;
  readonly channel: string | undefined;
  readonly requireSignature: boolean;
  readonly result: Awaited<ReturnType<typeof discoverReleases>>;
}

/** Validate the flags, open the cache, discover, and report skipped tags on stderr. */
export async function runDiscovery(
  ctx: CommandContext,
  raw: Record<string, unknown>,
): Promise<DiscoveryRun> {
  const flags = await registryFlags(raw, ctx.io.env);
  const o = parseFlags(discoverySchema, raw);
  const publicKeyPem = await readPublicKey(o.publicKey);
  const reader = createRegistryClient(flags.client);
  const cache =
    o.cache === false
      ? new InMemoryReleaseCache()
      : new FileReleaseCache(
          o.cache ?? defaultCachePath(ctx.io.env, flags.client.registry, flags.repository),
        );
  const result = await discoverReleases({
    reader,
    repository: flags.repository,
    cache,
    registry: flags.client.registry,
    platform: flags.platform,
    ...(publicKeyPem !== undefined && { publicKeyPem }),
  }).finally(() => reader.close());
  for (const w of result.warnings) ctx.io.err(`warning ${w.code}: ${w.message}\n`);
  reportSkipped(ctx, result.skipped);
  for (const m of result.rebuilds)
    ctx.io.err(`rebuilt ${m.tag}: ${m.from} → ${m.to} (a new build of the same version)\n`);
  return { flags, channel: o.channel, requireSignature: publicKeyPem !== undefined, result };
}

const shownSkips = 10;

/**
 * Skipped tags are never fatal, but users should see them: a few on stderr, then a count.
 * Signature and referrer tags (`sha256-….sig`) are expected neighbours of releases, not mistakes,
 * so they are left out.
 */
function reportSkipped(ctx: CommandContext, skipped: readonly SkippedTag[]): void {
  const notable = skipped.filter((s) => s.code !== ErrorCode.TagArtifact);
  for (const s of notable.slice(0, shownSkips))
    ctx.io.err(`skipped ${s.tag}: ${s.code} ${s.reason}\n`);
  if (notable.length > shownSkips)
    ctx.io.err(`… and ${notable.length - shownSkips} more skipped tags\n`);
}
