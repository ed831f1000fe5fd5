// SPDX-License-Identifier: Apache-2.0
import { ErrorCode, isMoltError } from '../protocol/index.ts';
import type { Built, BuiltArtifact, BuiltImage } from './image.ts';
import { MediaType } from './media-types.ts';
import { parseIndex } from './manifest.ts';
import { referrersTag } from './referrers.ts';
import type { Descriptor, RegistryClient, RegistryWriter } from './types.ts';

async function pushParts(
  client: RegistryWriter,
  repository: string,
  image: BuiltImage | BuiltArtifact,
): Promise<void> {
  for (const b of [image.config, ...image.layers])
    await client.pushBlob(repository, b.bytes, b.descriptor.mediaType);
}

/**
 * Push an image, index or artifact: blobs first, index children by digest, then the top manifest
 * under each tag (by digest alone when `tags` is empty). Returns the top manifest's digest.
 */
export async function pushImage(
  client: RegistryWriter,
  repository: string,
  tags: readonly string[],
  built: Built,
): Promise<string> {
  const top = built.manifest;
  if (built.kind === 'index') {
    for (const image of built.images) {
      await pushParts(client, repository, image);
      await client.pushManifest(
        repository,
        image.manifest.descriptor.digest,
        image.manifest.bytes,
        image.manifest.descriptor.mediaType,
      );
    }
  } else {
    await pushParts(client, repository, built);
  }
  const references = tags.length === 0 ? [top.descriptor.digest] : tags;
  for (const ref of references)
    await client.pushManifest(repository, ref, top.bytes, top.descriptor.mediaType);
  return top.descriptor.digest;
}

/**
 * Push an artifact that refers to a subject, and keep the referrers tag schema (`sha256-<hex>`)
 * up to date when the registry has no referrers API (registry 2.8.2), so readers on either kind
 * of registry find it. Two concurrent pushers can race on the tag; the last writer wins.
 */
export async function pushReferrer(
  client: RegistryClient,
  repository: string,
  artifact: BuiltArtifact,
): Promise<string> {
  const digest = await pushImage(client, repository, [], artifact);
  const subject = artifact.subject;
  if (subject === undefined) return digest;
  const listed = await client.listReferrers(repository, subject.digest);
  if (listed.some((d) => d.digest === digest)) return digest;
  const tag = referrersTag(subject.digest);
  const existing = await currentReferrers(client, repository, tag);
  const manifests: Descriptor[] = [
    ...existing.filter((d) => d.digest !== digest),
    artifact.manifest.descriptor,
  ];
  const bytes = new TextEncoder().encode(
    JSON.stringify({ schemaVersion: 2, mediaType: MediaType.OciIndex, manifests }),
  );
  await client.pushManifest(repository, tag, bytes, MediaType.OciIndex);
  return digest;
}

async function currentReferrers(
  client: RegistryClient,
  repository: string,
  tag: string,
): Promise<readonly Descriptor[]> {
  try {
    const m = await client.getManifest(repository, tag);
    return m.mediaType === MediaType.OciIndex
      ? parseIndex(m.json, `referrers index ${repository}:${tag}`).manifests
      : [];
  } catch (e) {
    if (isMoltError(e, ErrorCode.RegistryNotFound)) return [];
    throw e;
  }
}
