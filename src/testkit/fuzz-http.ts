// SPDX-License-Identifier: Apache-2.0
/**
 * Arbitrary HTTP requests for fuzzing a molt API in process (`app.inject`): known routes with
 * random methods, query strings, headers and bodies (random text, random JSON, mutations of
 * valid bodies), so the fuzzing reaches each route's validation. See testkit/fuzz.ts.
 */
import fc from 'fast-check';
import { anyText, fuzzJson, fuzzText } from './fuzz.ts';

/** One request for `app.inject`. */
export interface FuzzRequest {
  readonly method: 'GET' | 'POST' | 'PUT' | 'DELETE' | 'PATCH';
  readonly url: string;
  readonly headers: Record<string, string>;
  readonly payload?: string;
}

const contentTypes = [
  'application/json',
  'application/json; charset=utf-8',
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  '',
];

/** Header values fastify's inject accepts (no line breaks or other control characters). */
const headerValue = (valid: readonly string[]): fc.Arbitrary<string> =>
  fuzzText(valid, 80).map((v) => v.replace(/[^\t\x20-\x7e]/g, ''));

/** Percent-encoded text; surrogates are dropped (a lone one cannot be encoded at all). */
const uri = (text: string): string => encodeURI(text.replace(/[\ud800-\udfff]/g, ''));

/** The options of `app.inject` for `req`, with `url` and `headers` replaced when given. */
export function injectOptions(
  req: FuzzRequest,
  over: { readonly url?: string; readonly headers?: Record<string, string> } = {},
): {
  method: FuzzRequest['method'];
  url: string;
  headers: Record<string, string>;
  payload?: string;
} {
  const base = {
    method: req.method,
    url: over.url ?? req.url,
    headers: over.headers ?? req.headers,
  };
  return req.payload === undefined ? base : { ...base, payload: req.payload };
}

/** Requests to `paths` (and mutations of them) with bodies shaped like `bodies`. */
export function fuzzRequest(
  paths: readonly string[],
  bodies: readonly unknown[],
): fc.Arbitrary<FuzzRequest> {
  const query = fc.oneof(
    fc.constant(''),
    fuzzText(['follow=1', 'tail=10', 'operation=op-1&follow=true', 'explain=1', 'limit=5'], 60),
  );
  const path = fc.oneof(fc.constantFrom(...paths), fuzzText(paths, 60));
  return fc.record(
    {
      method: fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'PATCH' as const),
      url: fc
        .tuple(path, query)
        .map(([p, q]) => `/${uri(p.replace(/^\/+/, '')).replace(/[?#]/g, '')}?${uri(q)}`),
      headers: fc.record(
        {
          'content-type': fc.constantFrom(...contentTypes),
          'last-event-id': headerValue(['op-1:3', 'op-1:999999999999999', ':1', 'x:y']),
        },
        { requiredKeys: [] },
      ),
      payload: fc.oneof(
        fuzzJson(bodies).map((j) => JSON.stringify(j)),
        anyText(200),
      ),
    },
    { requiredKeys: ['method', 'url', 'headers'] },
  );
}
