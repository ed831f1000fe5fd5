// SPDX-License-Identifier: Apache-2.0
// Release signatures: cosign legacy `.sig` and Sigstore bundle referrers, verified offline with a key.

export { generateKeyPair, parsePublicKey, type KeyPair } from './keys.ts';
export type { SignatureFormat, VerifyFailureCode, VerifyResult } from './result.ts';
export {
  CosignSignatureType,
  signLegacy,
  simpleSigningPayload,
  verifyLegacySignature,
  type LegacySignature,
  type SignLegacyOptions,
  type VerifyLegacyOptions,
} from './legacy.ts';
export {
  BundleMediaType,
  createBundle,
  verifyBundle,
  type CreateBundleOptions,
  type VerifyBundleOptions,
} from './bundle.ts';
export { CosignSignPredicateType, InTotoPayloadType } from './statement.ts';
export {
  bundleReferrerArtifact,
  legacySignatureArtifact,
  legacySignatureTag,
  SignatureAnnotation,
  SimpleSigningMediaType,
  type ArtifactBlob,
  type ArtifactLayout,
  type BundleArtifactOptions,
} from './artifacts.ts';
export { checkSignature, type CheckSignatureOptions } from './check.ts';
export {
  attachBundle,
  attachLegacySignature,
  pushArtifact,
  type AttachBundleOptions,
  type AttachLegacyOptions,
} from './attach.ts';
