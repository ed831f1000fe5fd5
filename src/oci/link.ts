// SPDX-License-Identifier: Apache-2.0
/**
 * The `rel="next"` target of an RFC 8288 `Link` header, resolved against the URL of the request
 * that returned it (registry 2.8.2 sends relative links such as `</v2/_catalog?last=a&n=1>`).
 * The query is kept verbatim: Quay pages with an opaque `next_page=` instead of `last`.
 * A target that is not a URL throws MOLT_REGISTRY_PROTOCOL.
 */
import { ErrorCode, MoltError } from '../protocol/index.ts';

/** The absolute URL of the next page `header` links to, or undefined on the last page. */
export function nextLink(header: string | null, requestUrl: string): string | undefined {
  if (header === null) return undefined;
  for (const part of splitLinks(header)) {
    const m = /^\s*<([^>]*)>(.*)$/s.exec(part);
    if (!m) continue;
    const rels = /;\s*rel\s*=\s*(?:"([^"]*)"|([^\s;,]+))/i.exec(m[2] ?? '');
    const rel = rels?.[1] ?? rels?.[2] ?? '';
    if (rel.toLowerCase().split(/\s+/).includes('next')) return resolve(m[1] ?? '', requestUrl);
  }
  return undefined;
}

/** The link target as an absolute URL; one that is not a URL is the registry's fault. */
function resolve(target: string, requestUrl: string): string {
  try {
    return new URL(target, requestUrl).href;
  } catch (e) {
    throw new MoltError(
      ErrorCode.RegistryProtocol,
      `the registry's next-page link ${JSON.stringify(target)} is not a URL`,
      { cause: e, hint: 'the registry or a proxy sends a malformed Link header' },
    );
  }
}

/** Split at commas that separate link values (not those inside `<…>` or quotes). */
function splitLinks(header: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let quoted = false;
  let start = 0;
  for (let i = 0; i < header.length; i++) {
    const c = header[i];
    if (c === '"') quoted = !quoted;
    else if (!quoted && c === '<') depth++;
    else if (!quoted && c === '>') depth = Math.max(0, depth - 1);
    else if (!quoted && depth === 0 && c === ',') {
      parts.push(header.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(header.slice(start));
  return parts;
}
