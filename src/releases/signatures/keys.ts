// SPDX-License-Identifier: Apache-2.0
/** Key handling shared by the cosign legacy and Sigstore bundle formats. */
import {
  createHash,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  sign,
  verify,
  type KeyObject,
} from 'node:crypto';
import { ErrorCode, MoltError } from '../../protocol/index.ts';

/** A PEM key pair: PKCS#8 private key and SPKI public key. */
export interface KeyPair {
  readonly privateKeyPem: string;
  readonly publicKeyPem: string;
}

/** A fresh ECDSA P-256 key pair in PEM, the key type `cosign generate-key-pair` creates (unencrypted here). */
export function generateKeyPair(): KeyPair {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return {
    privateKeyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    publicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
  };
}

const supportedKeyTypes = new Set(['ec', 'rsa', 'ed25519']);

/**
 * Parse a PEM public key (ECDSA, RSA or Ed25519). A bad key is a configuration error, not a
 * verdict on a release, so it throws MOLT_PUBLIC_KEY_INVALID instead of returning a result.
 */
export function parsePublicKey(pem: string): KeyObject {
  let key: KeyObject;
  try {
    key = createPublicKey({ key: pem, format: 'pem' });
  } catch (e) {
    throw new MoltError(
      ErrorCode.PublicKeyInvalid,
      'the signature public key is not a valid PEM public key',
      {
        hint: 'pass the cosign.pub written by `cosign generate-key-pair` (-----BEGIN PUBLIC KEY-----)',
        cause: e,
      },
    );
  }
  if (!supportedKeyTypes.has(key.asymmetricKeyType ?? '')) {
    throw new MoltError(
      ErrorCode.PublicKeyInvalid,
      `public keys of type ${key.asymmetricKeyType ?? 'unknown'} are not supported`,
      {
        hint: 'use an ECDSA, RSA or Ed25519 key',
      },
    );
  }
  return key;
}

/** Parse a PEM private key for signing; a bad key throws MOLT_PUBLIC_KEY_INVALID (the key pair is unusable). */
export function parsePrivateKey(pem: string): KeyObject {
  try {
    return createPrivateKey({ key: pem, format: 'pem' });
  } catch (e) {
    throw new MoltError(
      ErrorCode.PublicKeyInvalid,
      'the signing key is not a valid unencrypted PEM private key',
      {
        hint: 'encrypted cosign.key files are not supported; export the key as PKCS#8 PEM',
        cause: e,
      },
    );
  }
}

/**
 * The digest algorithm cosign uses with a key: SHA-256 for ECDSA (any curve) and RSA PKCS#1 v1.5,
 * none for Ed25519, which signs the message itself.
 */
function algorithmFor(key: KeyObject): string | null {
  return key.asymmetricKeyType === 'ed25519' ? null : 'sha256';
}

/** Sign `message` the way cosign does with `key` (ECDSA signatures are ASN.1 DER). */
export function signMessage(key: KeyObject, message: Uint8Array): Buffer {
  return sign(algorithmFor(key), message, key);
}

/** Verify a cosign-style signature over `message`; malformed signatures are just false. */
export function verifyMessage(key: KeyObject, message: Uint8Array, signature: Uint8Array): boolean {
  try {
    return verify(algorithmFor(key), message, key, signature);
  } catch {
    return false;
  }
}

/** The Sigstore key hint: base64 of the SHA-256 of the public key's SPKI DER, as sigstore-go writes it. */
export function keyHint(key: KeyObject): string {
  const der = (key.type === 'private' ? createPublicKey(key) : key).export({
    type: 'spki',
    format: 'der',
  });
  return createHash('sha256').update(der).digest('base64');
}
