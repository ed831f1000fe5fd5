// SPDX-License-Identifier: Apache-2.0
/**
 * Signature verdicts for discovered releases, cached per digest and public key.
 *
 * Only `verified` is cached. A verified signature over an immutable digest with a given key stays
 * verified, so re-checking it would only cost requests. `unsigned` and `invalid` are re-checked on
 * every scan: a signature is usually pushed *after* the image (cosign signs what is already in the
 * registry), and with the referrers API it appears without any tag changing — caching "unsigned"
 * would hide a release from `--public-key` selection until the cache was deleted. The price is the
 * signature lookups of unsigned releases on each scan that is given a key; scans without a key
 * make none.
 */
import { createHash } from 'node:crypto';
import type { SignatureState } from '../../core/releases/release.ts';
import type { RegistryReader } from '../../oci/types.ts';
import type { SignatureEntry } from '../cache/types.ts';
import { checkSignature } from '../signatures/index.ts';
import { mapConcurrent } from './pool.ts';

/** Inputs of {@link signatureStates}. */
export interface SignatureCheck {
  readonly reader: RegistryReader;
  readonly repository: string;
  readonly publicKeyPem: string | undefined;
  readonly digests: readonly string[];
  /** Verified verdicts from the previous scans, keyed by {@link signatureKey}. */
  readonly cached: Readonly<Record<string, SignatureEntry>>;
  readonly concurrency: number;
  readonly onChecked?: (done: number, total: number) => void;
}

/** The verdict for every digest, and the verified ones to cache. */
export interface SignatureResults {
  readonly states: ReadonlyMap<string, SignatureState>;
  readonly verified: Readonly<Record<string, SignatureEntry>>;
}

/** Verdicts for `digests`: `unchecked` without a key, else cached or freshly checked. */
export async function signatureStates(c: SignatureCheck): Promise<SignatureResults> {
  const states = new Map<string, SignatureState>();
  const verified: Record<string, SignatureEntry> = {};
  const pem = c.publicKeyPem;
  if (pem === undefined) {
    for (const d of c.digests) states.set(d, { status: 'unchecked' });
    return { states, verified };
  }
  const fingerprint = keyFingerprint(pem);
  const todo: string[] = [];
  for (const d of c.digests) {
    const hit = c.cached[signatureKey(d, fingerprint)];
    if (hit === undefined) todo.push(d);
    else states.set(d, { status: 'verified', format: hit.format });
  }
  let done = 0;
  await mapConcurrent(todo, c.concurrency, async (digest) => {
    const state = await checkSignature({
      reader: c.reader,
      repository: c.repository,
      digest,
      publicKeyPem: pem,
    });
    states.set(digest, state);
    c.onChecked?.(++done, todo.length);
  });
  for (const [digest, state] of states) {
    if (state.status === 'verified')
      verified[signatureKey(digest, fingerprint)] = { format: state.format };
  }
  return { states, verified };
}

/** The cache key of a verdict: the digest and the key's fingerprint. */
export function signatureKey(digest: string, fingerprint: string): string {
  return `${digest} ${fingerprint}`;
}

/**
 * A short fingerprint of a PEM public key: sha256 of its base64 body with whitespace removed, so
 * the same key re-wrapped or with CRLF line ends maps to the same verdicts, and another key never
 * inherits a verdict.
 */
export function keyFingerprint(pem: string): string {
  const body = pem.replace(/-----[^-]+-----/g, '').replace(/\s+/g, '');
  return createHash('sha256').update(body).digest('hex').slice(0, 16);
}
