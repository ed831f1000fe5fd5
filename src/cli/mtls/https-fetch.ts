// SPDX-License-Identifier: Apache-2.0
/**
 * The CLI's requests over mTLS, on node:https rather than undici: importing undici costs 60–90 ms,
 * most of a short command such as `molt rollout list` (benchmark P16), and a command makes a few
 * requests on one keep-alive connection, which node:https does as well. The daemons keep undici.
 *
 * A failure keeps Node's own error (its `code`: ECONNREFUSED, a certificate's code, ERR_SSL_…),
 * which `transport-errors.ts` reads; the two bounds undici had are kept, each with its own code.
 */
import { Agent, request, type RequestOptions } from 'node:https';
import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';
import { Readable } from 'node:stream';
import type { HttpFetch, HttpRequest, HttpResponse } from '../../protocol/http-client.ts';
import type { TlsMaterial } from './tls-probe.ts';

export interface HttpsFetchOptions {
  readonly tls: TlsMaterial;
  /** Bound on connecting and on waiting for an answer's headers. */
  readonly timeoutMs: number;
  /** Bound on a silence inside an answer's body; 0 for none (a followed event stream). */
  readonly bodyTimeoutMs: number;
}

/** A fetch-like function on one keep-alive agent, and how to let its connections go. */
export interface HttpsFetch {
  readonly fetch: HttpFetch;
  /** Drop every connection, in use or idle. */
  destroy(): void;
}

/** A bound's error; its code is one `connect-failure.ts` says in words. */
const timeoutError = (code: string, message: string): Error =>
  Object.assign(new Error(message), { code });

export function createHttpsFetch(o: HttpsFetchOptions): HttpsFetch {
  const agent = new Agent({ keepAlive: true, ...o.tls });
  const fetch: HttpFetch = (url, init) =>
    new Promise<HttpResponse>((resolve, reject) => {
      const target = new URL(url);
      const host = target.hostname.replace(/^\[|\]$/g, '');
      const timeoutMs = init.answerWithinMs ?? o.timeoutMs;
      const options: RequestOptions = {
        method: init.method,
        headers: init.headers,
        agent,
        timeout: timeoutMs,
        ...(isIP(host) === 0 && { servername: host }),
      };
      const req = request(target, options, (res) => {
        req.setTimeout(0);
        resolve(answer(res, o.bodyTimeoutMs));
      });
      req.once('timeout', () => {
        const connected = req.socket !== null && !req.socket.connecting;
        req.destroy(
          connected
            ? timeoutError('ANSWER_TIMEOUT', `no answer within ${String(timeoutMs)} ms`)
            : timeoutError('ETIMEDOUT', `not connected within ${String(timeoutMs)} ms`),
        );
      });
      // Kept for the request's life: an error after the answer (the body cut) must not go unheard.
      req.on('error', reject);
      send(req, init.body);
    });
  return {
    fetch,
    destroy: () => {
      agent.destroy();
    },
  };
}

/** Send the body: a string at once; a byte stream as it comes, while the answer may already come. */
function send(req: ReturnType<typeof request>, body: HttpRequest['body']): void {
  if (body === undefined || typeof body === 'string') {
    req.end(body);
    return;
  }
  const source = Readable.from(body);
  source.once('error', (e) => req.destroy(e));
  source.pipe(req);
}

function answer(res: IncomingMessage, bodyTimeoutMs: number): HttpResponse {
  if (bodyTimeoutMs > 0)
    res.setTimeout(bodyTimeoutMs, () => {
      res.destroy(timeoutError('BODY_TIMEOUT', `silent for ${String(bodyTimeoutMs)} ms`));
    });
  return {
    status: res.statusCode ?? 0,
    body: res,
    text: async () => {
      const chunks: Buffer[] = [];
      for await (const chunk of res) chunks.push(chunk as Buffer);
      return Buffer.concat(chunks).toString('utf8');
    },
  };
}
