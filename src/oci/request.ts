// SPDX-License-Identifier: Apache-2.0
/** A registry request and response as the transport's consumers see them, and where a registry is. */
import type { Dispatcher } from 'undici';
import { ErrorCode, MoltError } from '../protocol/index.ts';
import type { Body } from './body.ts';
import type { RequestStats } from './types.ts';

/** Request kinds counted in {@link RequestStats} (`token` and `retries` are counted by the transport itself). */
export type RequestKind = Exclude<keyof RequestStats, 'token' | 'retries'>;

/** One logical registry request; the transport adds auth, timeouts, retries and redirects. */
export interface HttpRequest {
  readonly kind: RequestKind;
  readonly method: 'GET' | 'HEAD' | 'POST' | 'PUT';
  /** A path such as `/v2/acme/installer/tags/list`, or an absolute URL (upload locations, Link targets). */
  readonly url: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: Uint8Array;
  /** Token scopes, e.g. `repository:acme/installer:pull`. */
  readonly scopes: readonly string[];
  /** What the request is about, for error messages: `manifest acme/installer:1.8.0`. */
  readonly what: string;
  /** Non-2xx statuses handed to the consumer instead of raised (HEAD 404 → "absent"). */
  readonly accept?: readonly number[];
  /** Aborts the request (and no retry follows): a cancelled or timed-out image pull. */
  readonly signal?: AbortSignal;
}

/** A response as the request consumers see it: status, header lookup, and the body as a Node stream. */
export interface RegistryResponse {
  readonly status: number;
  readonly headers: ResponseHeaders;
  /** Must be read to its end, {@link discard}ed or destroyed; an unread body holds its connection. */
  readonly body: Body;
}

/** Case-insensitive header lookup; repeated headers are joined with `, ` (as fetch's `Headers.get` does). */
export interface ResponseHeaders {
  get(name: string): string | null;
}

export function responseOf(data: Dispatcher.ResponseData): RegistryResponse {
  const raw = data.headers;
  return {
    status: data.statusCode,
    body: data.body,
    headers: {
      get(name) {
        const v = raw[name.toLowerCase()];
        return v === undefined ? null : Array.isArray(v) ? v.join(', ') : v;
      },
    },
  };
}

/** Resolve `registry` (`host[:port]` or a URL) to the registry's origin. */
export function registryOrigin(registry: string, insecure: boolean): URL {
  const hasScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(registry);
  let url: URL;
  try {
    url = new URL(hasScheme ? registry : `${insecure ? 'http' : 'https'}://${registry}`);
  } catch (e) {
    throw new MoltError(ErrorCode.BadInput, `"${registry}" is not a registry address`, {
      cause: e,
      hint: 'use host[:port] or https://host[:port]',
    });
  }
  if (url.protocol === 'http:' && !insecure) {
    throw new MoltError(
      ErrorCode.BadInput,
      `registry ${registry} uses plain HTTP, which molt refuses by default`,
      {
        hint: 'use https, or pass --insecure for a loopback test registry',
      },
    );
  }
  return new URL(url.origin);
}
