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

  it('a Sigstore bundle of any shape gets a verdict; never a throw', () => {
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
          // Only the verdict is asserted: the key is configured (the bundle's key hint is not read)
          // and base64 decoders skip characters outside the alphabet, so edits that leave the
          // signed bytes alone may still verify.
          if (r.value.ok) assert.equal(r.value.format, 'sigstore-bundle');
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
