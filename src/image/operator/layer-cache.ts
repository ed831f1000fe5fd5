// SPDX-License-Identifier: Apache-2.0
/**
 * Each layer of the operator image is kept in the build cache (`operator-layer/<key>`) under the
 * digest of its input and of this builder's code: gzip of Node's 120 MB takes seconds, and the
 * same input always makes the same bytes, so a warm build reads the layer back instead.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { MediaType, sha256Digest, type LayerInput } from '../../oci/index.ts';
import { cachedEntry } from '../build/cache.ts';
import { treeDigest } from '../build/digest.ts';
import { cacheName } from '../build/recipe.ts';
import { gzipSync } from 'node:zlib';
import { tarArchive, type LayerEntry } from './entries.ts';

/** A change to how layers are laid out (this directory) makes new layers, not stale cache hits. */
export const builderDigest = (): Promise<string> =>
  treeDigest(import.meta.dirname, 'the operator image builder');

export interface LayerSummary {
  readonly name: string;
  readonly digest: string;
  /** Compressed. */
  readonly bytes: number;
  /** The tar archive's size: what the layer takes unpacked, roughly. */
  readonly tarBytes: number;
  readonly cached: boolean;
}

interface Made {
  readonly tarBytes: number;
}

/** The layer `name` for `key`, from the cache or made now from `entries()`. */
export async function cachedLayer(
  cache: string,
  l: {
    readonly name: string;
    readonly key: string;
    readonly fresh: boolean;
    readonly entries: () => Promise<readonly LayerEntry[]>;
  },
): Promise<{ layer: LayerInput; summary: LayerSummary }> {
  const { dir, hit } = await cachedEntry({
    cache,
    stage: 'operator-layer',
    name: `${l.name}-${cacheName(l.key)}`,
    fresh: l.fresh,
    produce: async (tmp) => {
      const tar = tarArchive(await l.entries());
      const made: Made = { tarBytes: tar.byteLength };
      // zlib writes no name or time into the gzip header: equal archives, equal layers.
      await writeFile(join(tmp, 'layer.tar.gz'), gzipSync(tar));
      await writeFile(join(tmp, 'layer.json'), `${JSON.stringify(made)}\n`);
    },
  });
  const bytes = new Uint8Array(await readFile(join(dir, 'layer.tar.gz')));
  const made = JSON.parse(await readFile(join(dir, 'layer.json'), 'utf8')) as Made;
  return {
    layer: { mediaType: MediaType.OciLayerGzip, bytes },
    summary: {
      name: l.name,
      digest: sha256Digest(bytes),
      bytes: bytes.byteLength,
      tarBytes: made.tarBytes,
      cached: hit,
    },
  };
}
