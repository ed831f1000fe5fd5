// SPDX-License-Identifier: Apache-2.0
/**
 * The on-disk shape of the discovery cache, validated with zod on every load: the file is outside
 * molt's control (edited by hand, truncated by a full disk, written by another molt version), and
 * a state that merely *looks* right would feed wrong digests into rebuild detection.
 */
import { z } from 'zod';
import type { RepositoryState } from './types.ts';

/** Bump on any incompatible change; a file with another version is discarded and rebuilt. */
export const cacheSchemaVersion = 1;

/** The `kind` every cache file carries, so a random JSON file passed as --cache is rejected. */
export const cacheKind = 'molt.releases.cache';

const digest = z.string().regex(/^[a-z0-9]+(?:[+._-][a-z0-9]+)*:[a-zA-Z0-9=_-]+$/);

const imageEntry = z.union([
  z.strictObject({
    ok: z.literal(true),
    labels: z.record(z.string(), z.string()),
    created: z.string().optional(),
  }),
  z.strictObject({ ok: z.literal(false), code: z.string(), reason: z.string() }),
]);

const repositoryState = z.strictObject({
  tags: z.record(z.string(), digest),
  images: z.record(z.string(), z.record(digest, imageEntry)),
  signatures: z.record(
    z.string(),
    z.strictObject({ format: z.enum(['cosign-legacy', 'sigstore-bundle']) }),
  ),
});

/** A whole cache file: one state per `<registry>/<repository>` key. */
export const cacheFileSchema = z.strictObject({
  kind: z.literal(cacheKind),
  version: z.literal(cacheSchemaVersion),
  repositories: z.record(z.string(), repositoryState),
});

/** The parsed content of a cache file. */
export interface CacheFile {
  readonly kind: typeof cacheKind;
  readonly version: typeof cacheSchemaVersion;
  readonly repositories: Readonly<Record<string, RepositoryState>>;
}

/** A cache file holding nothing. */
export function emptyCacheFile(): CacheFile {
  return { kind: cacheKind, version: cacheSchemaVersion, repositories: {} };
}
