// SPDX-License-Identifier: Apache-2.0
/**
 * Installer images for tests and benchmarks: the lab's (src/lab/services/installer-image.ts), and
 * the same artifacts packed in one tar layer, gzipped or not, or hand-made tar layers
 * (`tar-writer.ts`) with the entries the unsafe-entry checks must refuse.
 */
import { gzipSync } from 'node:zlib';
import {
  buildInstallerImage as buildLabImage,
  pushInstallerImage as pushLabImage,
  type InstallerImage,
  type InstallerImageSpec as LabImageSpec,
} from '../lab/services/installer-image.ts';
import { MediaType, type LayerInput, type RegistryWriter } from '../oci/index.ts';
import { tarArchive, type TarEntry } from './tar-writer.ts';

export { artifactLayer, type InstallerImage } from '../lab/services/installer-image.ts';
export { tarArchive, type TarEntry } from './tar-writer.ts';

export interface InstallerImageSpec extends Omit<LabImageSpec, 'layers'> {
  /** @default 'raw' */
  readonly format?: 'raw' | 'tar' | 'tar+gzip';
}

/** A tar layer of `entries`, gzipped or not. */
export function tarLayer(entries: readonly TarEntry[], gzip = false): LayerInput {
  const tar = tarArchive(entries);
  return gzip
    ? { mediaType: MediaType.OciLayerGzip, bytes: new Uint8Array(gzipSync(tar)) }
    : { mediaType: MediaType.OciLayer, bytes: tar };
}

/** The lab's spec for `spec`: tar formats become a `layers` function. */
function labSpec(spec: InstallerImageSpec): LabImageSpec {
  const { format = 'raw', ...rest } = spec;
  if (format === 'raw') return rest;
  return {
    ...rest,
    layers: (artifacts) => [
      tarLayer(
        Object.entries(artifacts).map(([name, body]) => ({ name, body })),
        format === 'tar+gzip',
      ),
    ],
  };
}

/** Build (but do not push) an installer image. */
export const buildInstallerImage = (spec: InstallerImageSpec = {}): InstallerImage =>
  buildLabImage(labSpec(spec));

/** Build and push an installer image under `tag`; returns the image and its manifest digest. */
export const pushInstallerImage = (
  client: RegistryWriter,
  repository: string,
  tag: string,
  spec: InstallerImageSpec = {},
): Promise<InstallerImage & { readonly digest: string }> =>
  pushLabImage(client, repository, tag, labSpec(spec));
