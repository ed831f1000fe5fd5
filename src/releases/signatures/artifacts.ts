// SPDX-License-Identifier: Apache-2.0
/**
 * The registry layouts cosign uses for signatures: the legacy `.sig` image manifest and the
 * Sigstore-bundle referrer manifest. Pure builders: bytes in, manifest and blob bytes out.
 */
import { Buffer } from 'node:buffer';
import { createHash } from 'node:crypto';
import { MediaType, type Descriptor } from '../../oci/index.ts';
import { BundleMediaType } from './bundle.ts';
import { goJson, type LegacySignature } from './legacy.ts';
import { CosignSignPredicateType } from './statement.ts';
import { digestTagForm } from './result.ts';

/** Layer media type of a cosign simple-signing payload. */
export const SimpleSigningMediaType = 'application/vnd.dev.cosign.simplesigning.v1+json';
/** Layer annotation carrying the base64 signature of a legacy cosign signature. */
export const SignatureAnnotation = 'dev.cosignproject.cosign/signature';

/** A blob of an artifact, ready to push. */
export interface ArtifactBlob {
  readonly descriptor: Descriptor;
  readonly bytes: Uint8Array;
}

/** An OCI artifact as pushed: config and layer blobs first, then the manifest. */
export interface ArtifactLayout {
  readonly config: ArtifactBlob;
  readonly layers: readonly ArtifactBlob[];
  readonly manifest: Uint8Array;
  readonly mediaType: string;
  readonly digest: string;
}

function sha256Digest(bytes: Uint8Array): string {
  return `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
}

/** The tag cosign stores legacy signatures under: `sha256-<hex>.sig`. */
export function legacySignatureTag(digest: string): string {
  return `${digestTagForm(digest)}.sig`;
}

function blob(
  bytes: Uint8Array,
  mediaType: string,
  annotations?: Readonly<Record<string, string>>,
): ArtifactBlob {
  // go-containerregistry's field order, so a `.sig` manifest is byte-identical to cosign's.
  const descriptor: Descriptor = { mediaType, size: bytes.length, digest: sha256Digest(bytes) };
  return {
    descriptor: annotations === undefined ? descriptor : { ...descriptor, annotations },
    bytes,
  };
}

function layout(
  manifest: unknown,
  config: ArtifactBlob,
  layers: readonly ArtifactBlob[],
): ArtifactLayout {
  const bytes = Buffer.from(JSON.stringify(manifest), 'utf8');
  return {
    config,
    layers,
    manifest: bytes,
    mediaType: MediaType.OciManifest,
    digest: sha256Digest(bytes),
  };
}

/**
 * The `.sig` image manifest for one or more legacy signatures, as cosign (via go-containerregistry)
 * writes it: one simple-signing layer per signature with the signature annotation, and an image
 * config whose rootfs lists the layers (uncompressed, so diff IDs equal layer digests).
 */
export function legacySignatureArtifact(signatures: readonly LegacySignature[]): ArtifactLayout {
  const layers = signatures.map((s) =>
    blob(s.payload, SimpleSigningMediaType, { [SignatureAnnotation]: s.signatureB64 }),
  );
  const config = {
    architecture: '',
    created: '0001-01-01T00:00:00Z',
    history: layers.map(() => ({ created: '0001-01-01T00:00:00Z' })),
    os: '',
    rootfs: { type: 'layers', diff_ids: layers.map((l) => l.descriptor.digest) },
    config: {},
  };
  const configBlob = blob(Buffer.from(goJson(config), 'utf8'), MediaType.OciConfig);
  const manifest = {
    schemaVersion: 2,
    mediaType: MediaType.OciManifest,
    config: configBlob.descriptor,
    layers: layers.map((l) => l.descriptor),
  };
  return layout(manifest, configBlob, layers);
}

/** Input of {@link bundleReferrerArtifact}. */
export interface BundleArtifactOptions {
  readonly bundleJson: string;
  /** The signed release manifest: the referrer's `subject`. */
  readonly subject: Pick<Descriptor, 'mediaType' | 'digest' | 'size'>;
  /** RFC 3339 creation time for the `org.opencontainers.image.created` annotation, if wanted. */
  readonly created?: string;
}

/**
 * The OCI 1.1 referrer manifest cosign v3 pushes for a signature bundle (specs/BUNDLE_SPEC.md):
 * `artifactType` = the bundle media type, the empty config, one bundle layer, `subject` = the image.
 * Field order and the `artifactType` repeated on the config descriptor are cosign 3.1's, so with
 * the same `created` the manifest is byte-identical to the one cosign pushes.
 */
export function bundleReferrerArtifact(options: BundleArtifactOptions): ArtifactLayout {
  // cosign 3.1 writes no `org.opencontainers.image.title` on the layer, although BUNDLE_SPEC.md allows one.
  const layer = blob(Buffer.from(options.bundleJson, 'utf8'), BundleMediaType);
  const empty = blob(Buffer.from('{}', 'utf8'), MediaType.OciEmpty);
  const annotations: Record<string, string> = {
    'dev.sigstore.bundle.content': 'dsse-envelope',
    'dev.sigstore.bundle.predicateType': CosignSignPredicateType,
  };
  if (options.created !== undefined)
    annotations['org.opencontainers.image.created'] = options.created;
  const { mediaType, digest, size } = options.subject;
  const manifest = {
    schemaVersion: 2,
    mediaType: MediaType.OciManifest,
    config: { ...empty.descriptor, artifactType: BundleMediaType },
    layers: [layer.descriptor],
    annotations,
    subject: { mediaType, size, digest },
    artifactType: BundleMediaType,
  };
  return layout(manifest, empty, [layer]);
}
