// SPDX-License-Identifier: Apache-2.0
import { ErrorCode, MoltError } from '../protocol/index.ts';
import { discard, pumpVerified, readLimited, verifyingStream, type BlobSink } from './body.ts';
import { sha256Digest, verifyDigest } from './digest.ts';
import {
  bareMediaType,
  isImageManifestType,
  isIndexType,
  manifestAccept,
  manifestMediaTypes,
} from './media-types.ts';
import {
  checkBodyMediaType,
  parseImageManifest,
  parseIndex,
  parseJson,
  selectPlatform,
} from './manifest.ts';
import {
  checkDigest,
  checkReference,
  checkRepository,
  displayReference,
  isDigest,
} from './names.ts';
import { listReferrers } from './referrers.ts';
import { listAllTags, type TagPaging } from './tags.ts';
import { Transport } from './transport.ts';
import type {
  Descriptor,
  FetchedManifest,
  Platform,
  RegistryClient,
  RegistryClientOptions,
  RequestStats,
  ResolvedImage,
} from './types.ts';
import { pushBlob, pushManifest } from './writer.ts';

/** Options of {@link OciRegistryClient} beyond {@link RegistryClientOptions}. */
export interface OciClientOptions extends RegistryClientOptions {
  /** Tag-list paging: `n` per request and the page cap. */
  readonly tagPaging?: Partial<TagPaging>;
}

const defaultPlatform: Platform = { os: 'linux', architecture: 'amd64' };

/** molt's OCI Distribution client on undici: see {@link RegistryClient} for the contract. */
export class OciRegistryClient implements RegistryClient {
  readonly stats: RequestStats;
  private readonly t: Transport;
  private readonly maxManifestBytes: number;
  private readonly paging: TagPaging;

  constructor(options: OciClientOptions) {
    this.t = new Transport(options);
    this.stats = this.t.stats;
    this.maxManifestBytes = options.maxManifestBytes ?? 4 * 1024 * 1024;
    this.paging = {
      pageSize: options.tagPaging?.pageSize ?? 100,
      maxPages: options.tagPaging?.maxPages ?? 1000,
    };
  }

  /** `host[:port]` of the registry. */
  get registry(): string {
    return this.t.registry;
  }

  async ping(): Promise<void> {
    await this.t.exchange(
      { kind: 'ping', method: 'GET', url: '/v2/', scopes: [], what: 'the API root /v2/' },
      discard,
    );
  }

  async listTags(repository: string): Promise<string[]> {
    checkRepository(repository);
    return listAllTags(this.t, repository, this.paging);
  }

  async headManifest(repository: string, reference: string): Promise<Descriptor | undefined> {
    const req = { ...manifestRequest(repository, reference, 'HEAD'), accept: [404] };
    const { what } = req;
    const head = await this.t.exchange(req, async (res) => {
      await discard(res);
      if (res.status === 404) return undefined;
      const mediaType = this.checkContentType(res.headers.get('content-type'), what);
      const digest =
        res.headers.get('docker-content-digest') ?? (isDigest(reference) ? reference : undefined);
      return { mediaType, digest, size: Number(res.headers.get('content-length') ?? Number.NaN) };
    });
    if (head === undefined) return undefined;
    if (head.digest !== undefined && isDigest(head.digest) && Number.isSafeInteger(head.size))
      return { mediaType: head.mediaType, digest: head.digest, size: head.size };
    // No usable Docker-Content-Digest (allowed before distribution-spec 1.1): the body is the only truth.
    const m = await this.getManifest(repository, reference);
    return { mediaType: m.mediaType, digest: m.digest, size: m.bytes.byteLength };
  }

  async getManifest(repository: string, reference: string): Promise<FetchedManifest> {
    const req = manifestRequest(repository, reference, 'GET');
    const { what } = req;
    return this.t.exchange(req, async (res) => {
      const mediaType = this.checkContentType(res.headers.get('content-type'), what);
      const bytes = await readLimited(res, this.maxManifestBytes, (size) =>
        tooLarge(ErrorCode.ManifestTooLarge, what, size, this.maxManifestBytes),
      );
      const announced = res.headers.get('docker-content-digest');
      const source = `${what} from registry ${this.t.registry}`;
      if (isDigest(reference)) verifyDigest(reference, bytes, source);
      if (announced !== null && isDigest(announced)) verifyDigest(announced, bytes, source);
      const json = parseJson(bytes, what);
      checkBodyMediaType(json, mediaType, what);
      const digest = isDigest(reference)
        ? reference
        : announced !== null && isDigest(announced)
          ? announced
          : sha256Digest(bytes);
      return { digest, mediaType, bytes, json };
    });
  }

  async resolveImage(
    repository: string,
    reference: string,
    platform: Platform = defaultPlatform,
  ): Promise<ResolvedImage> {
    const top = await this.getManifest(repository, reference);
    const what = `manifest ${displayReference(repository, reference)}`;
    if (!isIndexType(top.mediaType)) {
      const m = parseImageManifest(top.json, what);
      return {
        digest: top.digest,
        mediaType: top.mediaType,
        manifestDigest: top.digest,
        config: m.config,
        layers: m.layers,
        annotations: m.annotations,
      };
    }
    const index = parseIndex(top.json, what);
    const entry = selectPlatform(index, platform, what);
    const child = await this.getManifest(repository, entry.digest);
    if (!isImageManifestType(child.mediaType)) {
      throw new MoltError(
        ErrorCode.ManifestInvalid,
        `${what}: the entry for its platform is a ${child.mediaType}, not an image manifest`,
      );
    }
    const m = parseImageManifest(
      child.json,
      `manifest ${displayReference(repository, entry.digest)}`,
    );
    return {
      digest: top.digest,
      mediaType: top.mediaType,
      manifestDigest: child.digest,
      config: m.config,
      layers: m.layers,
      annotations: { ...index.annotations, ...m.annotations },
    };
  }

  async getBlob(
    repository: string,
    digest: string,
    maxBytes: number = this.maxManifestBytes,
  ): Promise<Uint8Array> {
    const req = blobRequest(repository, digest);
    const { what } = req;
    return this.t.exchange(req, async (res) => {
      const bytes = await readLimited(res, maxBytes, (size) =>
        tooLarge(ErrorCode.BlobTooLarge, what, size, maxBytes),
      );
      verifyDigest(digest, bytes, `${what} from registry ${this.t.registry}`);
      return bytes;
    });
  }

  async streamBlob(repository: string, digest: string): Promise<ReadableStream<Uint8Array>> {
    const req = blobRequest(repository, digest);
    const body = await this.t.exchange(req, (res) => Promise.resolve(res.body));
    return verifyingStream(body, digest, { registry: this.t.registry, what: req.what });
  }

  /**
   * Stream blob `digest` into `sink`, hashing in the same pass, without web streams or a promise
   * per chunk (the agent's slot writes, benchmark P5). Resolves with the byte count once the bytes
   * hash to `digest`; otherwise rejects with MOLT_DIGEST_MISMATCH after the sink saw every byte,
   * so the sink's output must not be trusted before this settles. Retries happen only before the
   * first byte reaches the sink. `signal` stops the request or the transfer at once and rejects
   * with its reason.
   */
  async streamBlobTo(
    repository: string,
    digest: string,
    sink: BlobSink,
    signal?: AbortSignal,
  ): Promise<number> {
    const req = { ...blobRequest(repository, digest), ...(signal !== undefined && { signal }) };
    const body = await this.t.exchange(req, (res) => Promise.resolve(res.body));
    return pumpVerified(body, digest, { registry: this.t.registry, what: req.what, signal }, sink);
  }

  async listReferrers(
    repository: string,
    digest: string,
    artifactType?: string,
  ): Promise<Descriptor[]> {
    checkRepository(repository);
    checkDigest(digest);
    return listReferrers(
      { transport: this.t, getManifest: (r, ref) => this.getManifest(r, ref) },
      { repository, digest, artifactType },
    );
  }

  async pushBlob(repository: string, bytes: Uint8Array, mediaType: string): Promise<Descriptor> {
    checkRepository(repository);
    return pushBlob(this.t, { repository, bytes, mediaType });
  }

  async pushManifest(
    repository: string,
    reference: string,
    bytes: Uint8Array,
    mediaType: string,
  ): Promise<string> {
    checkRepository(repository);
    checkReference(reference);
    return pushManifest(this.t, { repository, reference, bytes, mediaType });
  }

  /** Close pooled connections; the client must not be used afterwards. */
  async close(): Promise<void> {
    await this.t.close();
  }

  private checkContentType(contentType: string | null, what: string): string {
    const mediaType = bareMediaType(contentType);
    if (manifestMediaTypes.includes(mediaType)) return mediaType;
    throw new MoltError(
      ErrorCode.UnsupportedMediaType,
      `${what}: registry ${this.t.registry} sent Content-Type "${contentType ?? ''}", which is not a manifest type molt reads`,
      {
        hint: `molt reads ${manifestMediaTypes.join(', ')}`,
      },
    );
  }
}

/** The token scope for reading `repository`. */
export function pull(repository: string): string {
  return `repository:${repository}:pull`;
}

function tooLarge(code: ErrorCode, what: string, size: number, limit: number): MoltError {
  return new MoltError(code, `${what} is at least ${size} bytes, over the ${limit}-byte limit`, {
    hint: 'release manifests and configs are small; a larger one is a mistake or an attack',
  });
}

/**
 * A manifest HEAD or GET, after checking the names. Both send the full manifest `Accept` list:
 * distribution 2.8 answers 404 to a HEAD that does not name the OCI types.
 */
function manifestRequest(repository: string, reference: string, method: 'HEAD' | 'GET') {
  checkRepository(repository);
  checkReference(reference);
  return {
    kind: method === 'HEAD' ? 'manifestHead' : 'manifestGet',
    method,
    url: `/v2/${repository}/manifests/${reference}`,
    scopes: [pull(repository)],
    what: `manifest ${displayReference(repository, reference)}`,
    headers: { accept: manifestAccept },
  } as const;
}

/** A blob GET, after checking the names. */
function blobRequest(repository: string, digest: string) {
  checkRepository(repository);
  checkDigest(digest);
  return {
    kind: 'blobGet',
    method: 'GET',
    url: `/v2/${repository}/blobs/${digest}`,
    scopes: [pull(repository)],
    what: `blob ${repository}@${digest}`,
  } as const;
}
