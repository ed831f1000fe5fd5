// SPDX-License-Identifier: Apache-2.0
/**
 * The contract of molt's in-house OCI Distribution client (docs/adr/0003-oci-client.md).
 * Discovery, publishing, the agent's image pull and the tests all go through this interface.
 */

/** An OCI platform; discovery defaults to linux/amd64. */
export interface Platform {
  readonly os: string;
  readonly architecture: string;
  readonly variant?: string;
}

/** An OCI content descriptor. */
export interface Descriptor {
  readonly mediaType: string;
  readonly digest: string;
  readonly size: number;
  readonly annotations?: Readonly<Record<string, string>>;
  readonly platform?: Platform;
  readonly artifactType?: string;
}

/** A manifest as fetched: its verified digest, its media type and the raw and parsed bodies. */
export interface FetchedManifest {
  readonly digest: string;
  readonly mediaType: string;
  readonly bytes: Uint8Array;
  readonly json: unknown;
}

/** A tag or digest resolved down to one platform's image manifest and its config descriptor. */
export interface ResolvedImage {
  /** Digest of what the reference points at (an index or a manifest). */
  readonly digest: string;
  readonly mediaType: string;
  /** Digest of the selected platform manifest (equals `digest` for single-platform images). */
  readonly manifestDigest: string;
  readonly config: Descriptor;
  readonly layers: readonly Descriptor[];
  /** Annotations of the index and the manifest, manifest winning. */
  readonly annotations: Readonly<Record<string, string>>;
}

/** Counts of HTTP requests by kind; tests and benchmarks assert on them (e.g. warm re-scans). */
export interface RequestStats {
  ping: number;
  tagList: number;
  manifestHead: number;
  manifestGet: number;
  blobHead: number;
  blobGet: number;
  referrers: number;
  token: number;
  push: number;
  retries: number;
}

/** Credentials for basic auth, or for the token endpoint in bearer auth. */
export interface Credentials {
  readonly username: string;
  readonly password: string;
}

/**
 * Credentials that belong to one registry: `registry` is its `host[:port]` as image references
 * name it. A client for references of any host takes them only for that one
 * ({@link credentialsFor}): a reference naming another host must not collect the password.
 */
export interface ScopedCredentials extends Credentials {
  readonly registry: string;
}

/** How to reach one registry. */
export interface RegistryClientOptions {
  /** `host[:port]`, or a URL (`http://…` / `https://…`). */
  readonly registry: string;
  /** Allow plain HTTP (and an unverified TLS certificate) — meant for loopback registries. */
  readonly insecure?: boolean;
  /**
   * Sent to this registry's own origin only (never across a redirect), and to its token service
   * only over https on the registry's host or a host in `tokenRealms`. With `insecure`, only to a
   * loopback registry: plain HTTP or an unverified certificate would hand them to anyone on the path.
   */
  readonly credentials?: Credentials;
  /**
   * Set when the owner gave credentials molt will not send to this registry (they name no
   * registry, or lack a half): what to fix, as the hint of the MOLT_REGISTRY_CREDENTIALS_WITHHELD
   * a refusal then fails with, rather than MOLT_REGISTRY_UNAUTHORIZED's "pass --username".
   */
  readonly withheldCredentials?: string;
  /**
   * Token-service hosts (`host` or `host:port`) besides the registry's own that may receive the
   * credentials, over https: e.g. `auth.docker.io` for Docker Hub. @default []
   */
  readonly tokenRealms?: readonly string[];
  /** Per-request timeout. @default 30000 */
  readonly timeoutMs?: number;
  /** Retries on connection errors, 429 and 5xx, with exponential backoff. @default 4 */
  readonly retries?: number;
  /** Base backoff delay. @default 200 */
  readonly backoffMs?: number;
  /** Largest manifest or config accepted. @default 4 MiB */
  readonly maxManifestBytes?: number;
  /** Concurrent requests allowed against this registry. @default 16 */
  readonly concurrency?: number;
  /** PEM CA bundle to trust in addition to the system store. */
  readonly ca?: string;
}

/**
 * Client options for whichever registry an image reference names (the agent's pulls): the
 * credentials go only to the registry they name ({@link ScopedCredentials}).
 */
export interface ReferencedRegistryOptions extends Omit<
  RegistryClientOptions,
  'registry' | 'credentials'
> {
  readonly credentials?: ScopedCredentials;
}

/** Reading from a registry. Every method verifies digests of what it returns. */
export interface RegistryReader {
  readonly stats: RequestStats;
  /** GET /v2/: reachability and auth check. */
  ping(): Promise<void>;
  /** All tags of a repository (following `Link` pagination), de-duplicated and sorted. */
  listTags(repository: string): Promise<string[]>;
  /** HEAD a manifest: its digest, media type and size; `undefined` on 404. */
  headManifest(repository: string, reference: string): Promise<Descriptor | undefined>;
  /** GET a manifest by tag or digest, with size limit and digest verification. */
  getManifest(repository: string, reference: string): Promise<FetchedManifest>;
  /** Resolve a reference to one platform's manifest (index → platform child). */
  resolveImage(repository: string, reference: string, platform?: Platform): Promise<ResolvedImage>;
  /** GET a small blob (configs, signatures) fully into memory, size-limited and digest-verified. */
  getBlob(repository: string, digest: string, maxBytes?: number): Promise<Uint8Array>;
  /**
   * Stream a blob; the stream errors with MOLT_DIGEST_MISMATCH at its end if the bytes do not hash
   * to `digest` (callers must not trust data before the stream ends cleanly).
   */
  streamBlob(repository: string, digest: string): Promise<ReadableStream<Uint8Array>>;
  /** Referrers of a manifest (API, falling back to the `sha256-<hex>` tag schema on 404). */
  listReferrers(repository: string, digest: string, artifactType?: string): Promise<Descriptor[]>;
}

/** Writing to a registry: used by `molt dev publish`, test seeding and benchmarks. */
export interface RegistryWriter {
  /** Upload a blob (monolithic POST+PUT); skips the upload when the blob exists. */
  pushBlob(repository: string, bytes: Uint8Array, mediaType: string): Promise<Descriptor>;
  /** PUT a manifest under a tag or its digest; returns the digest. */
  pushManifest(
    repository: string,
    reference: string,
    bytes: Uint8Array,
    mediaType: string,
  ): Promise<string>;
}

export type RegistryClient = RegistryReader & RegistryWriter;
