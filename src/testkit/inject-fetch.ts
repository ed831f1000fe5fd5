// SPDX-License-Identifier: Apache-2.0
import type { FastifyInstance } from 'fastify';
import type { HttpFetch } from '../protocol/http-client.ts';

/**
 * A protocol client's `fetch` answered by `app.inject`, in process: the typed client and the
 * routes tested together without a listener (the base URL's host is ignored, its path kept).
 */
export function injectFetch(app: FastifyInstance): HttpFetch {
  return async (url, init) => {
    const res = await app.inject({
      method: init.method,
      url: new URL(url).pathname,
      headers: init.headers,
      ...(init.body !== undefined && { payload: init.body }),
    });
    return { status: res.statusCode, text: () => Promise.resolve(res.body), body: null };
  };
}
