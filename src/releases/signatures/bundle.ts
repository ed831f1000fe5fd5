// SPDX-License-Identifier: Apache-2.0
/**
 * cosign v3's default signature: a Sigstore bundle (v0.3) holding a DSSE envelope around an in-toto
 * statement whose subject is the image digest and whose predicate type is cosign's signature type.
 * Verified offline with a public key through @sigstore/verify (oci-discovery.md §7.2, §7.4).
 */
import type { KeyObject } from 'node:crypto';
import { bundleFromJSON, bundleToJSON, toDSSEBundle, type Bundle } from '@sigstore/bundle';
import { toSignedEntity, toTrustMaterial, Verifier } from '@sigstore/verify';
import { ErrorCode } from '../../protocol/index.ts';
import { keyHint, parsePrivateKey, parsePublicKey, signMessage } from './keys.ts';
import {
  checkStatement,
  InTotoPayloadType,
  preAuthEncoding,
  signingStatement,
} from './statement.ts';
import { rejected, type VerifyResult } from './result.ts';
import { errorMessage } from '../../core/errors.ts';

/** Media type of a v0.3 Sigstore bundle, also the referrer `artifactType` cosign uses. */
export const BundleMediaType = 'application/vnd.dev.sigstore.bundle.v0.3+json';

/** Input of {@link createBundle}. */
export interface CreateBundleOptions {
  readonly privateKeyPem: string;
  /** The signed image's manifest digest (`sha256:…`). */
  readonly digest: string;
}

/**
 * Sign `digest` as `cosign sign --key` (v3) does and return the serialized bundle JSON. The key
 * hint goes into the verification material only: cosign leaves the DSSE signature's `keyid`
 * empty, and a `keyid` that differs from cosign's own key ID makes `cosign verify` skip the
 * signature ("accepted signatures do not match threshold, Found: 0").
 */
export function createBundle(options: CreateBundleOptions): string {
  const key = parsePrivateKey(options.privateKeyPem);
  const statement = signingStatement(options.digest);
  const signature = signMessage(key, preAuthEncoding(InTotoPayloadType, statement));
  const bundle = toDSSEBundle({ artifact: statement, artifactType: InTotoPayloadType, signature });
  return JSON.stringify({
    ...bundleToJSON(bundle),
    verificationMaterial: { publicKey: { hint: keyHint(key) } },
  });
}

/** Input of {@link verifyBundle}. */
export interface VerifyBundleOptions {
  readonly bundleJson: string;
  readonly publicKeyPem: string;
  /** The release's manifest digest the statement subject must name. */
  readonly expectedDigest: string;
}

/**
 * Verify a Sigstore bundle offline against one public key, then check that it is a cosign signature
 * statement for `expectedDigest`. Throws MOLT_PUBLIC_KEY_INVALID for a bad key; every verdict on
 * the bundle is a result.
 */
export function verifyBundle(options: VerifyBundleOptions): VerifyResult {
  const key = parsePublicKey(options.publicKeyPem);
  const parsed = parseBundle(options.bundleJson);
  if ('ok' in parsed) return parsed;
  const content = parsed.content;
  if (content.$case !== 'dsseEnvelope') {
    return rejected(
      ErrorCode.SignatureUnsupported,
      'message-signature bundles sign a blob, not an image; expected a DSSE envelope',
    );
  }
  if (parsed.verificationMaterial.content.$case !== 'publicKey') {
    return rejected(
      ErrorCode.SignatureUnsupported,
      'the bundle is signed with a certificate (keyless); molt verifies key-signed bundles only',
    );
  }
  const failure = verifyWithKey(parsed, key);
  if (failure !== undefined) return failure;
  const envelope = content.dsseEnvelope;
  if (envelope.payloadType !== InTotoPayloadType) {
    return rejected(
      ErrorCode.SignatureUnsupported,
      `the DSSE payload type is ${envelope.payloadType}, not an in-toto statement`,
    );
  }
  return checkStatement(envelope.payload, options.expectedDigest);
}

function parseBundle(json: string): Bundle | VerifyResult {
  try {
    return bundleFromJSON(JSON.parse(json));
  } catch (e) {
    return rejected(ErrorCode.SignatureMalformed, `not a Sigstore bundle: ${errorMessage(e)}`);
  }
}

/**
 * Run @sigstore/verify with an empty trusted root and thresholds 0: a key-signed bundle carries no
 * transparency-log entry or timestamp, and the default thresholds (1 each) would reject it with
 * TIMESTAMP_ERROR. The key finder ignores the bundle's hint so that a key given out of band is
 * what decides, whatever hint the signer wrote (cosign versions differ).
 */
function verifyWithKey(bundle: Bundle, key: KeyObject): VerifyResult | undefined {
  const trust = toTrustMaterial(emptyTrustedRoot, () => ({ publicKey: key, validFor: () => true }));
  const verifier = new Verifier(trust, {
    tlogThreshold: 0,
    ctlogThreshold: 0,
    timestampThreshold: 0,
  });
  try {
    verifier.verify(toSignedEntity(bundle));
    return undefined;
  } catch (e) {
    const code = (e as { code?: unknown }).code;
    const detail = errorMessage(e);
    return rejected(
      ErrorCode.SignatureInvalid,
      code === 'SIGNATURE_ERROR'
        ? 'the bundle signature does not verify with the configured public key'
        : `the bundle does not verify: ${detail}`,
    );
  }
}

const emptyTrustedRoot: Parameters<typeof toTrustMaterial>[0] = {
  mediaType: 'application/vnd.dev.sigstore.trustedroot+json;version=0.1',
  tlogs: [],
  certificateAuthorities: [],
  ctlogs: [],
  timestampAuthorities: [],
};
