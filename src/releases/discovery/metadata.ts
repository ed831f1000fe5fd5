// SPDX-License-Identifier: Apache-2.0
/**
 * Reading one release's metadata: the digest a tag resolved to → the platform's manifest → its
 * config blob → the labels molt reads. Faults of *this image* (garbage config, missing blob, no
 * manifest for the platform) become a negative {@link ImageEntry}, so one broken release never
 * fails discovery; faults of *the registry* (unreachable, 401, 5xx, rate limit) are rethrown.
 */
import { z } from 'zod';
import { ErrorCode, isMoltError } from '../../core/errors.ts';
import { ReleaseLabel } from '../../core/releases/release.ts';
import type { Platform, RegistryReader, ResolvedImage } from '../../oci/types.ts';
import type { ImageEntry } from '../cache/types.ts';

/** Image faults: the release is skipped with this code instead of failing the scan. */
const imageFaults: ReadonlySet<string> = new Set([
  ErrorCode.ManifestInvalid,
  ErrorCode.ManifestTooLarge,
  ErrorCode.UnsupportedMediaType,
  ErrorCode.PlatformNotFound,
  ErrorCode.ConfigInvalid,
  ErrorCode.BlobTooLarge,
  ErrorCode.DigestMismatch,
  ErrorCode.RegistryNotFound,
]);

/**
 * Image faults that may heal without the digest changing — a blob deleted and pushed again, a
 * proxy that corrupted one response — are not cached, so the next scan tries again. Everything
 * else is a property of the immutable content and is cached for good (as Cincinnati does).
 */
const transientFaults: ReadonlySet<string> = new Set([
  ErrorCode.DigestMismatch,
  ErrorCode.RegistryNotFound,
  // These depend on this molt (its media types and size limits), not only on the content: a newer
  // molt or a larger limit must be able to read the release without a cache purge.
  ErrorCode.UnsupportedMediaType,
  ErrorCode.ManifestTooLarge,
  ErrorCode.BlobTooLarge,
]);

/**
 * Only what molt reads is checked, and leniently: a `created: null` or a non-string label that
 * molt does not use must not make a release unreadable (`.catch` drops just that field).
 */
const configSchema = z.object({
  created: z.string().optional().catch(undefined),
  os: z.string().optional().catch(undefined),
  architecture: z.string().optional().catch(undefined),
  variant: z.string().optional().catch(undefined),
  config: z
    .object({ Labels: z.record(z.string(), z.unknown()).nullish().catch(undefined) })
    .nullish()
    .catch(undefined),
});

const moltLabels: readonly string[] = Object.values(ReleaseLabel);

/** What {@link readImage} found, and whether the answer may be cached by digest. */
export interface ImageRead {
  readonly entry: ImageEntry;
  readonly cacheable: boolean;
}

/** Resolve `digest` for `platform`, fetch its config and keep the labels molt reads. */
export async function readImage(
  reader: RegistryReader,
  repository: string,
  digest: string,
  platform: Platform,
): Promise<ImageRead> {
  try {
    const image = await reader.resolveImage(repository, digest, platform);
    return await readConfig(reader, repository, image, platform);
  } catch (e) {
    return imageFault(e);
  }
}

/**
 * Resolve a *tag* and read its metadata in one go: the manifest GET that resolves the tag also
 * tells its digest, so no HEAD is needed. `undefined` when the tag's image is broken or gone: the
 * caller then learns the digest with a HEAD and records the fault under it ({@link readImage}).
 */
export async function readTaggedImage(
  reader: RegistryReader,
  repository: string,
  tag: string,
  platform: Platform,
): Promise<{ readonly digest: string; readonly read: ImageRead } | undefined> {
  let image: ResolvedImage;
  try {
    image = await reader.resolveImage(repository, tag, platform);
  } catch (e) {
    imageFault(e);
    return undefined;
  }
  try {
    return { digest: image.digest, read: await readConfig(reader, repository, image, platform) };
  } catch (e) {
    return { digest: image.digest, read: imageFault(e) };
  }
}

/**
 * A tag's digest from a manifest GET; `undefined` when the manifest is broken or gone (the caller
 * falls back to a HEAD, which still tells the digest of a broken manifest).
 */
export async function tagDigestByGet(
  reader: RegistryReader,
  repository: string,
  tag: string,
): Promise<string | undefined> {
  try {
    return (await reader.getManifest(repository, tag)).digest;
  } catch (e) {
    imageFault(e);
    return undefined;
  }
}

async function readConfig(
  reader: RegistryReader,
  repository: string,
  image: ResolvedImage,
  platform: Platform,
): Promise<ImageRead> {
  const bytes = await reader.getBlob(repository, image.config.digest);
  return { entry: parseConfig(bytes, platform), cacheable: true };
}

/** A fault of the image becomes a negative entry; anything else (the registry's) is rethrown. */
function imageFault(e: unknown): ImageRead {
  if (!isMoltError(e) || !imageFaults.has(e.code)) throw e;
  return {
    entry: { ok: false, code: e.code, reason: e.message },
    cacheable: !transientFaults.has(e.code),
  };
}

/**
 * The labels of an image config. Negative entries: a config that is not a JSON object, and one
 * built for another platform than `platform` — a single-platform manifest has no platform list to
 * choose from, so its config is the only place that says an amd64 installer is not for arm64.
 */
export function parseConfig(bytes: Uint8Array, platform?: Platform): ImageEntry {
  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch {
    return {
      ok: false,
      code: ErrorCode.ConfigInvalid,
      reason: 'the image config is not valid UTF-8 JSON',
    };
  }
  const parsed = configSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue?.path.join('.') ?? '';
    return {
      ok: false,
      code: ErrorCode.ConfigInvalid,
      reason: `the image config is malformed at "${where}": ${issue?.message ?? ''}`,
    };
  }
  const mismatch = platform === undefined ? undefined : platformMismatch(parsed.data, platform);
  if (mismatch !== undefined)
    return { ok: false, code: ErrorCode.PlatformNotFound, reason: mismatch };
  const labels = moltStringLabels(parsed.data.config?.Labels ?? {});
  const created = parsed.data.created;
  return created === undefined ? { ok: true, labels } : { ok: true, labels, created };
}

/** The labels molt reads, keeping only string values. */
function moltStringLabels(all: Readonly<Record<string, unknown>>): Record<string, string> {
  const labels: Record<string, string> = {};
  for (const k of moltLabels) {
    const v = all[k];
    if (typeof v === 'string') labels[k] = v;
  }
  return labels;
}

/** Why a config's declared platform is not `want`; fields the config omits are not compared. */
function platformMismatch(
  config: {
    readonly os?: string | undefined;
    readonly architecture?: string | undefined;
    readonly variant?: string | undefined;
  },
  want: Platform,
): string | undefined {
  const differs = (have: string | undefined, wanted: string | undefined): boolean =>
    have !== undefined && wanted !== undefined && have !== wanted;
  if (
    !differs(config.os, want.os) &&
    !differs(config.architecture, want.architecture) &&
    !differs(config.variant, want.variant)
  ) {
    return undefined;
  }
  const have = platformKey({
    os: config.os ?? '?',
    architecture: config.architecture ?? '?',
    ...(config.variant !== undefined && { variant: config.variant }),
  });
  return `the image is for ${have}, not ${platformKey(want)}`;
}

/** `os/arch[/variant]`: the key of a platform in the cache and in messages. */
export function platformKey(p: Platform): string {
  return [p.os, p.architecture, ...(p.variant === undefined ? [] : [p.variant])].join('/');
}
