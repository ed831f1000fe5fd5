// SPDX-License-Identifier: Apache-2.0
/**
 * Finding and verifying a release's signatures in its registry: the cosign legacy `.sig` tag and
 * Sigstore bundle referrers (oci-discovery.md §7). A release is verified if ANY signature verifies.
 */
import { Buffer } from 'node:buffer';
import type { SignatureState } from '../../core/releases/release.ts';
import { ErrorCode, isMoltError } from '../../protocol/index.ts';
import type { Descriptor, RegistryReader } from '../../oci/types.ts';
import { legacySignatureTag, SignatureAnnotation, SimpleSigningMediaType } from './artifacts.ts';
import { BundleMediaType, verifyBundle } from './bundle.ts';
import { parsePublicKey } from './keys.ts';
import { verifyLegacySignature } from './legacy.ts';
import type { VerifyResult } from './result.ts';

/** Input of {@link checkSignature}. */
export interface CheckSignatureOptions {
  readonly reader: RegistryReader;
  readonly repository: string;
  /** The release's manifest digest, as discovery resolved it from the tags. */
  readonly digest: string;
  readonly publicKeyPem: string;
}

/** Signature payloads and bundles are small; anything bigger is not a signature worth reading. */
const maxSignatureBytes = 1024 * 1024;

/**
 * Registry errors that mean "this signature artifact is broken", which an attacker or a bad pusher
 * can cause: they make that candidate invalid. Transport errors (unreachable, 5xx, auth) are
 * rethrown, so an outage is never reported as an unsigned or badly signed release.
 */
const candidateErrors = new Set<string>([
  ErrorCode.ManifestInvalid,
  ErrorCode.ManifestTooLarge,
  ErrorCode.BlobTooLarge,
  ErrorCode.DigestMismatch,
  ErrorCode.UnsupportedMediaType,
  ErrorCode.RegistryNotFound,
]);

/**
 * The signature verdict for `digest`: `verified` if a legacy signature or a bundle verifies with
 * the key, `unsigned` if there are none, `invalid` (with every candidate's reason) otherwise.
 * Throws MOLT_PUBLIC_KEY_INVALID for a bad key and registry transport errors as they are.
 */
export async function checkSignature(options: CheckSignatureOptions): Promise<SignatureState> {
  parsePublicKey(options.publicKeyPem);
  const results: VerifyResult[] = [];
  for (const source of [legacyCandidates, bundleCandidates]) {
    for await (const result of source(options)) {
      if (result.ok) return { status: 'verified', format: result.format };
      results.push(result);
    }
  }
  if (results.length === 0) return { status: 'unsigned' };
  const reasons = results.map((r) => (r.ok ? '' : `${r.code}: ${r.reason}`));
  return {
    status: 'invalid',
    reason: `${results.length} signature(s), none verified: ${reasons.join('; ')}`,
  };
}

interface Layer {
  readonly mediaType?: unknown;
  readonly digest?: unknown;
  readonly annotations?: Readonly<Record<string, unknown>>;
}

/** The layers of a fetched image manifest; a manifest without a layer list has none. */
function layersOf(json: unknown): readonly Layer[] {
  const layers = (json as { layers?: unknown } | null)?.layers;
  if (!Array.isArray(layers)) return [];
  return layers.filter((l: unknown): l is Layer => typeof l === 'object' && l !== null);
}

async function* legacyCandidates(o: CheckSignatureOptions): AsyncGenerator<VerifyResult> {
  const tag = legacySignatureTag(o.digest);
  const head = await o.reader.headManifest(o.repository, tag);
  if (head === undefined) return;
  const manifest = await guarded(() => o.reader.getManifest(o.repository, head.digest));
  if (!('json' in manifest)) {
    yield manifest;
    return;
  }
  const layers = layersOf(manifest.json).filter((l) => l.mediaType === SimpleSigningMediaType);
  if (layers.length === 0) yield invalid(`${tag} holds no simple-signing layers`);
  for (const layer of layers) yield legacyLayer(o, layer);
}

async function legacyLayer(o: CheckSignatureOptions, layer: Layer): Promise<VerifyResult> {
  const signatureB64 = layer.annotations?.[SignatureAnnotation];
  if (typeof signatureB64 !== 'string' || typeof layer.digest !== 'string') {
    return invalid(
      `a simple-signing layer lacks a digest or the ${SignatureAnnotation} annotation`,
    );
  }
  const payload = await guarded(() =>
    o.reader.getBlob(o.repository, layer.digest as string, maxSignatureBytes),
  );
  if (!(payload instanceof Uint8Array)) return payload;
  return verifyLegacySignature({
    payload,
    signatureB64,
    publicKeyPem: o.publicKeyPem,
    expectedDigest: o.digest,
  });
}

async function* bundleCandidates(o: CheckSignatureOptions): AsyncGenerator<VerifyResult> {
  const referrers = await o.reader.listReferrers(o.repository, o.digest, BundleMediaType);
  // Filter again: registries without the filter feature (and the tag-schema fallback) return all.
  for (const ref of referrers.filter((r: Descriptor) => r.artifactType === BundleMediaType)) {
    const manifest = await guarded(() => o.reader.getManifest(o.repository, ref.digest));
    if (!('json' in manifest)) {
      yield manifest;
      continue;
    }
    const layers = layersOf(manifest.json).filter((l) => l.mediaType === BundleMediaType);
    if (layers.length === 0) yield invalid(`referrer ${ref.digest} holds no bundle layer`);
    for (const layer of layers) yield bundleLayer(o, layer);
  }
}

async function bundleLayer(o: CheckSignatureOptions, layer: Layer): Promise<VerifyResult> {
  if (typeof layer.digest !== 'string') return invalid('a bundle layer lacks a digest');
  const bytes = await guarded(() =>
    o.reader.getBlob(o.repository, layer.digest as string, maxSignatureBytes),
  );
  if (!(bytes instanceof Uint8Array)) return bytes;
  const bundleJson = Buffer.from(bytes).toString('utf8');
  return verifyBundle({ bundleJson, publicKeyPem: o.publicKeyPem, expectedDigest: o.digest });
}

function invalid(reason: string): VerifyResult {
  return { ok: false, code: ErrorCode.SignatureMalformed, reason };
}

/** Run a registry read; a broken-artifact error becomes an invalid candidate, anything else is rethrown. */
async function guarded<T>(read: () => Promise<T>): Promise<T | VerifyResult> {
  try {
    return await read();
  } catch (e) {
    if (isMoltError(e) && candidateErrors.has(e.code)) return invalid(e.message);
    throw e;
  }
}
