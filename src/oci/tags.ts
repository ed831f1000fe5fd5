// SPDX-License-Identifier: Apache-2.0
import { ErrorCode, MoltError } from '../protocol/index.ts';
import { readLimited } from './body.ts';
import { nextLink } from './link.ts';
import { isObject, parseJson } from './manifest.ts';
import type { Transport } from './transport.ts';

/** How tag listing pages. */
export interface TagPaging {
  /** `n` sent with each request. @default 100 */
  readonly pageSize: number;
  /** Pages followed before giving up (a registry that loops must not hang discovery). @default 1000 */
  readonly maxPages: number;
}

const maxTagListBytes = 16 * 1024 * 1024;

interface TagPage {
  readonly tags: readonly string[];
  readonly next: string | undefined;
}

/**
 * Every tag of `repository`: follow `Link rel="next"` verbatim (resolved against the request URL);
 * without a Link, ask again with `last=` only when exactly `n` tags came back, since a registry may
 * return fewer than `n` only on the last page or with a Link. Registry 2.8.2 ignores `n` and
 * `last`, so a page that adds no new tag ends the walk instead of looping. Sorted ASCIIbetically
 * client-side (2.8.2 returns them unsorted), de-duplicated.
 */
export async function listAllTags(
  t: Transport,
  repository: string,
  paging: TagPaging,
): Promise<string[]> {
  const seen = new Set<string>();
  let url = `/v2/${repository}/tags/list?n=${paging.pageSize}`;
  for (let page = 0; page < paging.maxPages; page++) {
    const result = await fetchPage(t, repository, url);
    const before = seen.size;
    for (const tag of result.tags) seen.add(tag);
    const last = result.tags.at(-1);
    if (result.next !== undefined) url = result.next;
    else if (result.tags.length === paging.pageSize && last !== undefined && seen.size > before) {
      url = `/v2/${repository}/tags/list?n=${paging.pageSize}&last=${encodeURIComponent(last)}`;
    } else return [...seen].sort();
  }
  throw new MoltError(
    ErrorCode.RegistryProtocol,
    `registry ${t.registry} kept paginating the tags of ${repository} past ${paging.maxPages} pages`,
    {
      hint: 'the registry may be looping; report it, or raise the page cap',
    },
  );
}

async function fetchPage(t: Transport, repository: string, url: string): Promise<TagPage> {
  const what = `tags of ${repository}`;
  const requestUrl = new URL(url, t.origin).href;
  return t.exchange(
    {
      kind: 'tagList',
      method: 'GET',
      url: requestUrl,
      scopes: [`repository:${repository}:pull`],
      what,
      headers: { accept: 'application/json' },
    },
    async (res) => {
      const bytes = await readLimited(
        res,
        maxTagListBytes,
        (size) =>
          new MoltError(
            ErrorCode.RegistryProtocol,
            `${what}: the tag list from ${t.registry} is ${size} bytes, over the ${maxTagListBytes}-byte limit`,
          ),
      );
      const json = parseJson(bytes, `the tag list of ${repository}`, ErrorCode.RegistryProtocol);
      const tags = isObject(json) ? (json['tags'] ?? []) : undefined;
      if (!Array.isArray(tags) || tags.some((x) => typeof x !== 'string')) {
        throw new MoltError(
          ErrorCode.RegistryProtocol,
          `registry ${t.registry} sent a malformed tag list for ${repository}`,
        );
      }
      return { tags: tags as string[], next: nextLink(res.headers.get('link'), requestUrl) };
    },
  );
}
