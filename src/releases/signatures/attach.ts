// SPDX-License-Identifier: Apache-2.0
/**
 * Pushing signatures next to a release, the way cosign does: used by `molt dev publish` and by
 * tests that seed a registry. Reading them back is {@link checkSignature}'s job.
 */
import { Buffer } from 'node:buffer';
import { pushReferrer, type BuiltArtifact } from '../../oci/index.ts';
import type { Descriptor, RegistryClient, RegistryWriter } from '../../oci/types.ts';
import {
  bundleReferrerArtifact,
  legacySignatureArtifact,
  legacySignatureTag,
  SignatureAnnotation,
  SimpleSigningMediaType,
  type ArtifactLayout,
} from './artifacts.ts';
import { BundleMediaType } from './bundle.ts';
import type { LegacySignature } from './legacy.ts';

/** Push an artifact's blobs, then its manifest under `reference` (a tag, or its own digest). */
export async function pushArtifact(
  writer: RegistryWriter,
  repository: string,
  artifact: ArtifactLayout,
  reference: string = artifact.digest,
): Promise<string> {
  for (const b of [artifact.config, ...artifact.layers])
    await writer.pushBlob(repository, b.bytes, b.descriptor.mediaType);
  return writer.pushManifest(repository, reference, artifact.manifest, artifact.mediaType);
}

/** Input of {@link attachLegacySignature}. */
export interface AttachLegacyOptions {
  readonly client: RegistryClient;
  readonly repository: string;
  /** The signed release's manifest digest. */
  readonly digest: string;
  readonly signature: LegacySignature;
}

/**
 * Add a legacy signature to the `sha256-<hex>.sig` tag, keeping the signatures already there (as
 * cosign does, so a second signer does not erase the first); an identical signature is not added twice.
 */
export async function attachLegacySignature(o: AttachLegacyOptions): Promise<string> {
  const tag = legacySignatureTag(o.digest);
  const existing = await existingLegacySignatures(o.client, o.repository, tag);
  const same = (s: LegacySignature): boolean =>
    s.signatureB64 === o.signature.signatureB64 &&
    Buffer.compare(s.payload, o.signature.payload) === 0;
  const all = existing.some(same) ? existing : [...existing, o.signature];
  return pushArtifact(o.client, o.repository, legacySignatureArtifact(all), tag);
}

async function existingLegacySignatures(
  client: RegistryClient,
  repository: string,
  tag: string,
): Promise<LegacySignature[]> {
  const head = await client.headManifest(repository, tag);
  if (head === undefined) return [];
  const manifest = await client.getManifest(repository, head.digest);
  const layers = (manifest.json as { layers?: Descriptor[] }).layers ?? [];
  const out: LegacySignature[] = [];
  for (const l of layers) {
    const signatureB64 = l.annotations?.[SignatureAnnotation];
    if (l.mediaType !== SimpleSigningMediaType || signatureB64 === undefined) continue;
    out.push({ payload: await client.getBlob(repository, l.digest), signatureB64 });
  }
  return out;
}

/** Input of {@link attachBundle}. */
export interface AttachBundleOptions {
  readonly client: RegistryClient;
  readonly repository: string;
  readonly bundleJson: string;
  /** The signed release manifest (its media type, digest and size). */
  readonly subject: Pick<Descriptor, 'mediaType' | 'digest' | 'size'>;
  readonly created?: string;
}

/**
 * Push a bundle as an OCI 1.1 referrer of `subject`, and list it in the `sha256-<hex>` referrers
 * tag on registries without the referrers API (distribution 2.8), so it is found on either kind.
 * Returns the referrer manifest's digest.
 */
export async function attachBundle(o: AttachBundleOptions): Promise<string> {
  const artifact = bundleReferrerArtifact({
    bundleJson: o.bundleJson,
    subject: o.subject,
    ...(o.created === undefined ? {} : { created: o.created }),
  });
  const { annotations } = JSON.parse(Buffer.from(artifact.manifest).toString('utf8')) as {
    annotations: Record<string, string>;
  };
  const built: BuiltArtifact = {
    kind: 'artifact',
    config: artifact.config,
    layers: artifact.layers,
    manifest: {
      descriptor: {
        mediaType: artifact.mediaType,
        digest: artifact.digest,
        size: artifact.manifest.length,
        artifactType: BundleMediaType,
        annotations,
      },
      bytes: artifact.manifest,
    },
    subject: o.subject,
  };
  return pushReferrer(o.client, o.repository, built);
}
