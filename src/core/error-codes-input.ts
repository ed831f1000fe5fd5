// SPDX-License-Identifier: Apache-2.0
/**
 * The error codes of outside input, the registry and releases — the first part of
 * {@link ErrorCode} (`errors.ts`), kept apart so that neither file outgrows a reader.
 */

/** Usage and input, registry transport and protocol, and releases. */
export const inputCodes = {
  // usage and input
  BadFlag: 'MOLT_BAD_FLAG',
  BadInput: 'MOLT_BAD_INPUT',
  InvalidTag: 'MOLT_INVALID_TAG',
  InvalidReference: 'MOLT_INVALID_REFERENCE',
  InvalidRange: 'MOLT_INVALID_RANGE',
  InvalidVersion: 'MOLT_INVALID_VERSION',
  // registry transport and protocol
  RegistryUnreachable: 'MOLT_REGISTRY_UNREACHABLE',
  RegistryTimeout: 'MOLT_REGISTRY_TIMEOUT',
  RegistryUnauthorized: 'MOLT_REGISTRY_UNAUTHORIZED',
  RegistryForbidden: 'MOLT_REGISTRY_FORBIDDEN',
  RegistryNotFound: 'MOLT_REGISTRY_NOT_FOUND',
  RegistryRateLimited: 'MOLT_REGISTRY_RATE_LIMITED',
  RegistryServerError: 'MOLT_REGISTRY_SERVER_ERROR',
  RegistryProtocol: 'MOLT_REGISTRY_PROTOCOL',
  /** A registry reached over HTTPS that speaks plain HTTP (`--insecure` is for such registries). */
  RegistryPlainHttp: 'MOLT_REGISTRY_PLAIN_HTTP',
  /**
   * The registry's credentials would have gone where molt does not send them: over plain HTTP or
   * unverified TLS to a host that is not loopback, or to a token service that is not https on the
   * registry's own host (nor listed in `tokenRealms`).
   */
  RegistryCredentialsWithheld: 'MOLT_REGISTRY_CREDENTIALS_WITHHELD',
  ManifestInvalid: 'MOLT_MANIFEST_INVALID',
  ManifestTooLarge: 'MOLT_MANIFEST_TOO_LARGE',
  UnsupportedMediaType: 'MOLT_UNSUPPORTED_MEDIA_TYPE',
  DigestMismatch: 'MOLT_DIGEST_MISMATCH',
  PlatformNotFound: 'MOLT_PLATFORM_NOT_FOUND',
  ConfigInvalid: 'MOLT_CONFIG_INVALID',
  BlobTooLarge: 'MOLT_BLOB_TOO_LARGE',
  // releases
  NoEligibleRelease: 'MOLT_NO_ELIGIBLE_RELEASE',
  SignatureMissing: 'MOLT_SIGNATURE_MISSING',
  SignatureInvalid: 'MOLT_SIGNATURE_INVALID',
  PublicKeyInvalid: 'MOLT_PUBLIC_KEY_INVALID',
  CacheCorrupt: 'MOLT_CACHE_CORRUPT',
  CacheUnavailable: 'MOLT_CACHE_UNAVAILABLE',
  /** A tag that is not a version at all (`latest`, `main`); skipped by discovery. */
  TagNotVersion: 'MOLT_TAG_NOT_VERSION',
  /** A signature, attestation, SBOM or referrers-index tag (`sha256-….sig`); skipped by discovery. */
  TagArtifact: 'MOLT_TAG_ARTIFACT',
  /** A channel name (in a label or a flag) that is not a lowercase DNS-label-like word. */
  InvalidChannel: 'MOLT_INVALID_CHANNEL',
  /** A signature (or bundle) that verifies but was made for another image digest: a replayed signature. */
  SignatureDigestMismatch: 'MOLT_SIGNATURE_DIGEST_MISMATCH',
  /** A signature payload, `.sig` manifest or Sigstore bundle that cannot be parsed. */
  SignatureMalformed: 'MOLT_SIGNATURE_MALFORMED',
  /** A signature molt cannot verify offline with a key (keyless certificates, message-signature bundles, attestations). */
  SignatureUnsupported: 'MOLT_SIGNATURE_UNSUPPORTED',
} as const;
