// SPDX-License-Identifier: Apache-2.0
import { randomUUID } from 'node:crypto';
import { sha256, type FakeRegistryStore, type StoredManifest } from './fake-registry-store.ts';

/** A response before faults are applied. */
export interface Reply {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body?: Uint8Array;
}

/** Tag-list paging behaviour of the fake. */
export interface TagPagingMode {
  /** `last` (a spec Link with `last=`), `opaque` (Quay-style `next_page=`), `none` (no Link at all). */
  readonly link: 'last' | 'opaque' | 'none';
  /** Serve at most this many tags per page whatever `n` asks (a Link says there are more). */
  readonly maxPageSize?: number;
}

/** What a route handler sees. */
export interface RouteContext {
  readonly store: FakeRegistryStore;
  readonly method: string;
  readonly name: string;
  readonly url: URL;
  readonly body: Uint8Array;
  readonly contentType: string;
  readonly tagPaging: TagPagingMode;
  readonly referrersPageSize: number;
  /** Origin (`http://host:port`) blob GETs are redirected to, when set. */
  readonly blobRedirect: string | undefined;
}

const encoder = new TextEncoder();

/** A spec-shaped JSON error reply. */
export function errorReply(status: number, code: string, message: string): Reply {
  return json(status, { errors: [{ code, message, detail: {} }] });
}

function json(status: number, value: unknown, headers: Record<string, string> = {}): Reply {
  const body = encoder.encode(JSON.stringify(value));
  return { status, headers: { 'content-type': 'application/json', ...headers }, body };
}

/** GET /v2/<name>/tags/list[?n=&last=]: sorted, paged with `Link` per the spec. */
export function tagsList(c: RouteContext): Reply {
  const repo = c.store.get(c.name);
  if (repo === undefined)
    return errorReply(404, 'NAME_UNKNOWN', 'repository name not known to registry');
  const all = [...repo.tags.keys()].sort();
  const nParam = c.url.searchParams.get('n');
  const cursor = c.url.searchParams.get('next_page');
  const last =
    cursor !== null ? Buffer.from(cursor, 'base64url').toString() : c.url.searchParams.get('last');
  const after = last === null ? all : all.filter((t) => t > last);
  if (nParam === '0') return json(200, { name: c.name, tags: [] });
  const requested = nParam === null ? after.length : Number(nParam);
  const size = Math.min(requested, c.tagPaging.maxPageSize ?? Number.MAX_SAFE_INTEGER);
  const page = after.slice(0, size);
  const tail = page.at(-1);
  const headers: Record<string, string> = {};
  if (after.length > page.length && tail !== undefined && c.tagPaging.link !== 'none') {
    const query =
      c.tagPaging.link === 'opaque'
        ? `next_page=${Buffer.from(tail).toString('base64url')}&n=${size}`
        : `n=${size}&last=${encodeURIComponent(tail)}`;
    headers['link'] = `</v2/${c.name}/tags/list?${query}>; rel="next"`;
  }
  return json(200, { name: c.name, tags: page }, headers);
}

/** GET/HEAD /v2/<name>/manifests/<ref>. */
export function getManifest(c: RouteContext, reference: string): Reply {
  const m = c.store.manifest(c.name, reference);
  if (m === undefined) {
    return c.store.get(c.name) === undefined
      ? errorReply(404, 'NAME_UNKNOWN', 'repository name not known to registry')
      : errorReply(404, 'MANIFEST_UNKNOWN', 'manifest unknown');
  }
  return {
    status: 200,
    headers: { 'content-type': m.mediaType, 'docker-content-digest': m.digest },
    body: m.bytes,
  };
}

type ParsedManifest = Readonly<Record<string, unknown>> & {
  config?: { digest?: string; mediaType?: string };
  layers?: { digest?: string }[];
  manifests?: { digest?: string }[];
  subject?: { digest?: string };
  artifactType?: string;
  annotations?: Record<string, string>;
  mediaType?: string;
};

/** PUT /v2/<name>/manifests/<ref>: checks the referenced content exists, answers `OCI-Subject`. */
export function putManifest(c: RouteContext, reference: string): Reply {
  let parsed: ParsedManifest;
  try {
    parsed = JSON.parse(Buffer.from(c.body).toString('utf8')) as ParsedManifest;
  } catch {
    return errorReply(400, 'MANIFEST_INVALID', 'manifest invalid');
  }
  const digest = sha256(c.body);
  const refused = checkPut(c, reference, parsed, digest);
  if (refused !== undefined) return refused;
  const repo = c.store.ensure(c.name);
  const stored = toStored(c, parsed, digest);
  repo.manifests.set(digest, stored);
  if (!reference.includes(':')) repo.tags.set(reference, digest);
  const headers: Record<string, string> = {
    location: `/v2/${c.name}/manifests/${digest}`,
    'docker-content-digest': digest,
  };
  if (stored.subject !== undefined) headers['oci-subject'] = stored.subject;
  return { status: 201, headers };
}

/** Refuse a manifest PUT the way distribution does: bad digest or tag, or unknown content. */
function checkPut(
  c: RouteContext,
  reference: string,
  parsed: ParsedManifest,
  digest: string,
): Reply | undefined {
  const byDigest = reference.includes(':');
  if (byDigest && reference !== digest) {
    return errorReply(400, 'DIGEST_INVALID', 'provided digest did not match uploaded content');
  }
  if (!byDigest && !/^[a-zA-Z0-9_][a-zA-Z0-9._-]{0,127}$/.test(reference)) {
    return errorReply(400, 'TAG_INVALID', 'manifest tag did not match URI');
  }
  const repo = c.store.get(c.name);
  const blobRefs = [parsed.config?.digest, ...(parsed.layers ?? []).map((l) => l.digest)];
  const childRefs = (parsed.manifests ?? []).map((m) => m.digest);
  const missingBlob = blobRefs.some((d) => d !== undefined && repo?.blobs.has(d) !== true);
  const missingChild = childRefs.some((d) => d === undefined || repo?.manifests.has(d) !== true);
  return missingBlob || missingChild
    ? errorReply(400, 'MANIFEST_BLOB_UNKNOWN', 'blob unknown to registry')
    : undefined;
}

function toStored(c: RouteContext, parsed: ParsedManifest, digest: string): StoredManifest {
  const artifactType = parsed.artifactType ?? parsed.config?.mediaType;
  return {
    bytes: c.body,
    mediaType: c.contentType,
    digest,
    ...(parsed.subject?.digest !== undefined && { subject: parsed.subject.digest }),
    ...(artifactType !== undefined && { artifactType }),
    ...(parsed.annotations !== undefined && { annotations: parsed.annotations }),
  };
}

/** GET/HEAD /v2/<name>/blobs/<digest>, optionally redirected to another origin (a "storage host"). */
export function getBlob(c: RouteContext, digest: string): Reply {
  const bytes = c.store.get(c.name)?.blobs.get(digest);
  if (bytes === undefined) return errorReply(404, 'BLOB_UNKNOWN', 'blob unknown to registry');
  if (c.blobRedirect !== undefined)
    return { status: 307, headers: { location: `${c.blobRedirect}/_storage/${c.name}/${digest}` } };
  return {
    status: 200,
    headers: { 'content-type': 'application/octet-stream', 'docker-content-digest': digest },
    body: bytes,
  };
}

/** POST /v2/<name>/blobs/uploads/ (monolithic with `?digest=`, else a session with a state query). */
export function startUpload(c: RouteContext): Reply {
  const repo = c.store.ensure(c.name);
  const digest = c.url.searchParams.get('digest');
  if (digest !== null) return storeBlob(c, digest);
  const id = randomUUID();
  const state = Buffer.from(`state-${id}==`).toString('base64');
  repo.uploads.set(id, state);
  return {
    status: 202,
    headers: {
      location: `/v2/${c.name}/blobs/uploads/${id}?_state=${encodeURIComponent(state)}`,
      'docker-upload-uuid': id,
      range: '0-0',
    },
  };
}

/** PUT /v2/<name>/blobs/uploads/<id>?_state=…&digest=…: the state must come back untouched. */
export function finishUpload(c: RouteContext, id: string): Reply {
  const repo = c.store.ensure(c.name);
  const state = repo.uploads.get(id);
  if (state === undefined || c.url.searchParams.get('_state') !== state)
    return errorReply(404, 'BLOB_UPLOAD_UNKNOWN', 'blob upload unknown to registry');
  const digest = c.url.searchParams.get('digest');
  if (digest === null) return errorReply(400, 'DIGEST_INVALID', 'digest missing');
  repo.uploads.delete(id);
  return storeBlob(c, digest);
}

function storeBlob(c: RouteContext, digest: string): Reply {
  if (sha256(c.body) !== digest)
    return errorReply(400, 'DIGEST_INVALID', 'provided digest did not match uploaded content');
  c.store.ensure(c.name).blobs.set(digest, c.body);
  return {
    status: 201,
    headers: { location: `/v2/${c.name}/blobs/${digest}`, 'docker-content-digest': digest },
  };
}

/** GET /v2/<name>/referrers/<digest>[?artifactType=]: an OCI index, filtered and paged. */
export function referrers(c: RouteContext, digest: string): Reply {
  const filter = c.url.searchParams.get('artifactType');
  const all = c.store
    .referrers(c.name, digest)
    .filter((m) => filter === null || m.artifactType === filter)
    .map((m) => ({
      mediaType: m.mediaType,
      digest: m.digest,
      size: m.bytes.byteLength,
      ...(m.artifactType !== undefined && { artifactType: m.artifactType }),
      ...(m.annotations !== undefined && { annotations: m.annotations }),
    }));
  const page = Number(c.url.searchParams.get('page') ?? '0');
  const size = c.referrersPageSize;
  const manifests = all.slice(page * size, (page + 1) * size);
  const headers: Record<string, string> = {
    'content-type': 'application/vnd.oci.image.index.v1+json',
  };
  if (filter !== null) headers['oci-filters-applied'] = 'artifactType';
  if (all.length > (page + 1) * size) {
    const next = new URLSearchParams({
      page: String(page + 1),
      ...(filter !== null && { artifactType: filter }),
    });
    headers['link'] = `</v2/${c.name}/referrers/${digest}?${next.toString()}>; rel="next"`;
  }
  const body = encoder.encode(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: 'application/vnd.oci.image.index.v1+json',
      manifests,
    }),
  );
  return { status: 200, headers, body };
}
