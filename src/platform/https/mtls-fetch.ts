// SPDX-License-Identifier: Apache-2.0
/**
 * A `fetch` for protocol's typed clients over mutual TLS: one undici connection pool presenting a
 * client certificate and trusting only the fleet CA, every request bounded by `timeoutMs`. The
 * operator reaches agents with it, the lab its machines. (The CLI builds its own, because it
 * diagnoses certificate problems for a person: cli/mtls/connect.ts.)
 */
import { Agent, fetch } from 'undici';
import type { HttpFetch } from '../../protocol/http-client.ts';

export interface MtlsFetchOptions {
  /** PEM: the fleet CA, the client's certificate and key. */
  readonly ca: string;
  readonly cert: string;
  readonly key: string;
  /** Per request (not per event stream). @default 5000 */
  readonly timeoutMs?: number;
}

export interface MtlsFetch {
  readonly fetch: HttpFetch;
  /** Close the pool's connections. */
  close(): Promise<void>;
}

export function createMtlsFetch(o: MtlsFetchOptions): MtlsFetch {
  const timeout = o.timeoutMs ?? 5_000;
  const dispatcher = new Agent({
    connect: { ca: o.ca, cert: o.cert, key: o.key, timeout },
    headersTimeout: timeout,
    bodyTimeout: timeout,
  });
  return {
    fetch: async (target, init) => {
      const res = await fetch(target, {
        ...init,
        ...(typeof init.body === 'object' && { duplex: 'half' as const }),
        dispatcher,
        signal: AbortSignal.timeout(timeout),
      });
      return { status: res.status, text: () => res.text(), body: res.body };
    },
    close: () => dispatcher.close(),
  };
}
