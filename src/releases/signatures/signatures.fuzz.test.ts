// SPDX-License-Identifier: Apache-2.0
// Fuzz targets (docs/patterns/testing.md): PEM public keys, Sigstore bundles and cosign legacy
// signature payloads, as a registry or a person hands them to molt. A bad signature is a verdict
// (a value); only a bad key (configuration) throws, as MOLT_PUBLIC_KEY_INVALID.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { ErrorCode } from '../../core/errors.ts';
import {
  accepted,
  anyBytes,
  fuzzJson,
  fuzzParameters,
  fuzzText,
  outcome,
} from '../../testkit/fuzz.ts';
import { createBundle, verifyBundle } from './bundle.ts';
import { generateKeyPair, parsePublicKey } from './keys.ts';
import { signLegacy, verifyLegacySignature } from './legacy.ts';

const digest = `sha256:${'a'.repeat(64)}`;
const keys = generateKeyPair();
const bundle = createBundle({ privateKeyPem: keys.privateKeyPem, digest });
const legacy = signLegacy({ privateKeyPem: keys.privateKeyPem, digest, reference: 'r.io/a' });

describe('fuzz: keys and signatures', () => {
  it('parsePublicKey reads a key or throws MOLT_PUBLIC_KEY_INVALID', () => {
    fc.assert(
      fc.property(fuzzText([keys.publicKeyPem], 300), (pem) => {
        accepted(
          outcome(() => parsePublicKey(pem), 'parsePublicKey'),
          ErrorCode.PublicKeyInvalid,
        );
      }),
      fuzzParameters(500),
    );
  });

  it('a Sigstore bundle of any shape gets a verdict; only its signed payload verifies', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fuzzJson([JSON.parse(bundle)]).map((j) => JSON.stringify(j)),
          fuzzText([bundle], 400),
        ),
        (json) => {
          const r = outcome(
            () =>
              verifyBundle({
                bundleJson: json,
                publicKeyPem: keys.publicKeyPem,
                expectedDigest: digest,
              }),
            'verifyBundle',
          );
          assert.ok(r.ok, 'a verdict, never a throw');
          // The key is configured, not taken from the bundle: what verifies is the signed payload.
          const payloadOf = (text: string): unknown =>
            (JSON.parse(text) as { dsseEnvelope: { payload: unknown } }).dsseEnvelope.payload;
          if (r.value.ok) assert.equal(payloadOf(json), payloadOf(bundle));
        },
      ),
      fuzzParameters(500),
    );
  });

  it('a legacy payload and signature of any bytes get a verdict', () => {
    const payload = fc.oneof(
      anyBytes(400),
      fuzzText([Buffer.from(legacy.payload).toString()], 400).map((t) =>
        new TextEncoder().encode(t),
      ),
    );
    fc.assert(
      fc.property(payload, fuzzText([legacy.signatureB64], 120), (p, sig) => {
        const r = outcome(
          () =>
            verifyLegacySignature({
              payload: p,
              signatureB64: sig,
              publicKeyPem: keys.publicKeyPem,
              expectedDigest: digest,
            }),
          'verifyLegacySignature',
        );
        assert.ok(r.ok, 'a verdict, never a throw');
      }),
      fuzzParameters(500),
    );
  });
});
