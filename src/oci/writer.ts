// SPDX-License-Identifier: Apache-2.0
import { ErrorCode, MoltError } from '../protocol/index.ts';
import { discard } from './body.ts';
import { digestMismatch, sha256Digest } from './digest.ts';
import { displayReference, isDigest } from './names.ts';
import type { Transport } from './transport.ts';
import type { Descriptor } from './types.ts';

/** A blob to upload. */
export interface BlobUpload {
  readonly repository: string;
  readonly bytes: Uint8Array;
  readonly mediaType: string;
}

/** A manifest to PUT under a tag or its digest. */
export interface ManifestUpload extends BlobUpload {
  readonly reference: string;
}

const pushScope = (repository: string): string => `repository:${repository}:pull,push`;

/**
 * Monolithic upload: HEAD (skip when present), `POST …/blobs/uploads/`, then `PUT <Location>&digest=`.
 * The Location's query (2.8.2 keeps its upload state there) is kept verbatim.
 */
export async function pushBlob(t: Transport, u: BlobUpload): Promise<Descriptor> {
  const digest = sha256Digest(u.bytes);
  const descriptor: Descriptor = { mediaType: u.mediaType, digest, size: u.bytes.byteLength };
  const what = `blob ${u.repository}@${digest}`;
  const scopes = [pushScope(u.repository)];
  const exists = await t.exchange(
    {
      kind: 'blobHead',
      method: 'HEAD',
      url: `/v2/${u.repository}/blobs/${digest}`,
      scopes,
      what,
      accept: [404],
    },
    async (res) => {
      await discard(res);
      return res.status === 200;
    },
  );
  if (exists) return descriptor;
  const start = new URL(`/v2/${u.repository}/blobs/uploads/`, t.origin).href;
  const location = await t.exchange(
    { kind: 'push', method: 'POST', url: start, scopes, what, headers: { 'content-length': '0' } },
    async (res) => {
      await discard(res);
      const l = res.headers.get('location');
      if (l === null)
        throw new MoltError(
          ErrorCode.RegistryProtocol,
          `registry ${t.registry} started an upload of ${what} without a Location`,
        );
      return new URL(l, start);
    },
  );
  const put = `${location.href}${location.search === '' ? '?' : '&'}digest=${encodeURIComponent(digest)}`;
  await t.exchange(
    {
      kind: 'push',
      method: 'PUT',
      url: put,
      scopes,
      what,
      body: u.bytes,
      headers: { 'content-type': 'application/octet-stream' },
    },
    discard,
  );
  return descriptor;
}

/** PUT a manifest; returns its digest, checked against what the registry reports. */
export async function pushManifest(t: Transport, u: ManifestUpload): Promise<string> {
  const digest = sha256Digest(u.bytes);
  if (isDigest(u.reference) && u.reference !== digest)
    throw digestMismatch(u.reference, digest, `manifest for ${u.repository}`);
  const what = `manifest ${displayReference(u.repository, u.reference)}`;
  const req = {
    kind: 'push',
    method: 'PUT',
    url: `/v2/${u.repository}/manifests/${u.reference}`,
    scopes: [pushScope(u.repository)],
    what,
    body: u.bytes,
    headers: { 'content-type': u.mediaType },
  } as const;
  const reported = await t.exchange(req, async (res) => {
    await discard(res);
    return res.headers.get('docker-content-digest');
  });
  if (reported !== null && reported !== digest)
    throw digestMismatch(digest, reported, `${what} as stored by registry ${t.registry}`);
  return digest;
}
