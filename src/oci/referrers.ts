// SPDX-License-Identifier: Apache-2.0
import { ErrorCode, MoltError, isMoltError } from '../protocol/index.ts';
import { discard, readLimited } from './body.ts';
import { nextLink } from './link.ts';
import { MediaType } from './media-types.ts';
import { parseIndex, parseJson } from './manifest.ts';
import type { Transport } from './transport.ts';
import type { Descriptor, FetchedManifest } from './types.ts';

/** What {@link listReferrers} needs from the client. */
export interface ReferrersDeps {
  readonly transport: Transport;
  readonly getManifest: (repository: string, reference: string) => Promise<FetchedManifest>;
}

/** Which referrers to list. */
export interface ReferrersQuery {
  readonly repository: string;
  readonly digest: string;
  readonly artifactType: string | undefined;
}

const maxPages = 100;
const maxIndexBytes = 4 * 1024 * 1024;

/** The referrers tag schema: `<alg>-<hex>`, algorithm cut to 32 characters, hex to 64, others replaced by `-`. */
export function referrersTag(digest: string): string {
  const [alg = '', hex = ''] = digest.split(':');
  return `${alg.slice(0, 32)}-${hex.slice(0, 64)}`.replace(/[^a-zA-Z0-9._-]/g, '-');
}

/**
 * Referrers of `digest`: the referrers API, following `Link` pages; on 404 (no API, e.g. registry
 * 2.8.2's plain-text 404) the tag-schema fallback. Filters by `artifactType` client-side when the
 * registry did not say `OCI-Filters-Applied: artifactType`.
 */
export async function listReferrers(deps: ReferrersDeps, q: ReferrersQuery): Promise<Descriptor[]> {
  const t = deps.transport;
  let url: string | undefined = new URL(
    `/v2/${q.repository}/referrers/${q.digest}${q.artifactType === undefined ? '' : `?artifactType=${encodeURIComponent(q.artifactType)}`}`,
    t.origin,
  ).href;
  const found: Descriptor[] = [];
  for (let page = 0; url !== undefined && page < maxPages; page++) {
    const result = await fetchPage(t, q, url);
    if (result === undefined) return page === 0 ? fallback(deps, q) : filter(found, q.artifactType);
    found.push(...filter(result.manifests, result.filtered ? undefined : q.artifactType));
    url = result.next;
  }
  return found;
}

async function fetchPage(
  t: Transport,
  q: ReferrersQuery,
  url: string,
): Promise<
  { manifests: readonly Descriptor[]; filtered: boolean; next: string | undefined } | undefined
> {
  const what = `referrers of ${q.repository}@${q.digest}`;
  const req = {
    kind: 'referrers',
    method: 'GET',
    url,
    scopes: [`repository:${q.repository}:pull`],
    what,
    headers: { accept: MediaType.OciIndex },
    accept: [404],
  } as const;
  return t.exchange(req, async (res) => {
    if (res.status === 404) {
      await discard(res);
      return undefined;
    }
    const bytes = await readLimited(res, maxIndexBytes, () => parseError(what));
    const index = parseIndex(parseJson(bytes, what), what);
    const filtered = (res.headers.get('oci-filters-applied') ?? '')
      .split(',')
      .map((s) => s.trim())
      .includes('artifactType');
    return { manifests: index.manifests, filtered, next: nextLink(res.headers.get('link'), url) };
  });
}

/** The tag-schema fallback: a missing tag or anything but an OCI index means "no referrers". */
async function fallback(deps: ReferrersDeps, q: ReferrersQuery): Promise<Descriptor[]> {
  let m: FetchedManifest;
  try {
    m = await deps.getManifest(q.repository, referrersTag(q.digest));
  } catch (e) {
    if (isMoltError(e, ErrorCode.RegistryNotFound)) return [];
    throw e;
  }
  if (m.mediaType !== MediaType.OciIndex) return [];
  return filter(
    parseIndex(m.json, `referrers index ${q.repository}:${referrersTag(q.digest)}`).manifests,
    q.artifactType,
  );
}

function filter(manifests: readonly Descriptor[], artifactType: string | undefined): Descriptor[] {
  return artifactType === undefined
    ? [...manifests]
    : manifests.filter((m) => m.artifactType === artifactType);
}

function parseError(what: string): MoltError {
  return new MoltError(
    ErrorCode.ManifestTooLarge,
    `${what}: the referrers index is over ${maxIndexBytes} bytes`,
  );
}
