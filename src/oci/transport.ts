// SPDX-License-Identifier: Apache-2.0
import { rootCertificates } from 'node:tls';
import { Agent } from 'undici';
import { ErrorCode, MoltError } from '../protocol/index.ts';
import { Authenticator } from './auth.ts';
import { abandon, discard, readErrorText } from './body.ts';
import { checkCredentialTransport } from './credential-scope.ts';
import {
  RegistryError,
  afterAttempts,
  errorForStatus,
  errorForTransport,
  parseRetryAfter,
  type RequestSubject,
} from './http-errors.ts';
import { Semaphore } from './semaphore.ts';
import { registryOrigin, responseOf, type HttpRequest, type RegistryResponse } from './request.ts';
import type { RegistryClientOptions, RequestStats } from './types.ts';

const redirectStatuses = new Set([301, 302, 303, 307, 308]);
const maxRedirects = 5;
/** Bytes a response body buffers before it stops reading the socket; blobs stream in chunks this large. */
const bodyHighWaterMark = 1024 * 1024;
const maxBackoffMs = 30_000;
/** A `Retry-After` longer than this is not waited out: the caller gets MOLT_REGISTRY_RATE_LIMITED at once. */
const maxRetryAfterMs = 60_000;

/** HTTP for one registry: auth, per-request timeouts, retries with backoff, redirects, concurrency cap, counters. */
export class Transport {
  readonly stats: RequestStats = {
    ping: 0,
    tagList: 0,
    manifestHead: 0,
    manifestGet: 0,
    blobHead: 0,
    blobGet: 0,
    referrers: 0,
    token: 0,
    push: 0,
    retries: 0,
  };
  readonly origin: URL;
  /** `host[:port]`, for messages. */
  readonly registry: string;
  private readonly agent: Agent;
  private readonly auth: Authenticator;
  private readonly slots: Semaphore;
  private readonly o: Required<
    Pick<RegistryClientOptions, 'timeoutMs' | 'retries' | 'backoffMs' | 'insecure'>
  >;
  private readonly hasCredentials: boolean;
  private readonly withheldCredentials: string | undefined;

  constructor(options: RegistryClientOptions) {
    this.o = {
      timeoutMs: options.timeoutMs ?? 30_000,
      retries: options.retries ?? 4,
      backoffMs: options.backoffMs ?? 200,
      insecure: options.insecure ?? false,
    };
    this.origin = registryOrigin(options.registry, this.o.insecure);
    this.registry = this.origin.host;
    checkCredentialTransport(this.origin, this.o.insecure, options.credentials);
    const concurrency = options.concurrency ?? 16;
    this.slots = new Semaphore(concurrency);
    this.agent = new Agent({
      connections: concurrency,
      headersTimeout: this.o.timeoutMs,
      // An idle gap this long while streaming a blob is a stalled registry, not a slow one.
      bodyTimeout: this.o.timeoutMs,
      connect: {
        rejectUnauthorized: !this.o.insecure,
        ...(options.ca !== undefined && { ca: [...rootCertificates, options.ca] }),
      },
    });
    this.hasCredentials = options.credentials !== undefined;
    this.withheldCredentials = options.withheldCredentials;
    this.auth = new Authenticator({
      registry: this.registry,
      ...(options.credentials !== undefined && { credentials: options.credentials }),
      ...(options.withheldCredentials !== undefined && {
        withheldCredentials: options.withheldCredentials,
      }),
      realms: {
        origin: this.origin,
        insecure: this.o.insecure,
        tokenRealms: options.tokenRealms ?? [],
      },
      requestToken: (url, headers) => this.requestToken(url, headers),
      now: () => Date.now(),
    });
  }

  /**
   * Send `req` and hand a successful response to `consume`, retrying connection errors, timeouts,
   * 429 and 5xx with exponential backoff and jitter (honouring `Retry-After`), never other 4xx.
   * The timeout covers `consume`, so a body that trickles in forever is cut off too.
   */
  async exchange<T>(req: HttpRequest, consume: (res: RegistryResponse) => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        req.signal?.throwIfAborted();
        return await this.attempt(req, consume);
      } catch (e) {
        if (req.signal?.aborted === true) throw req.signal.reason;
        if (!(e instanceof RegistryError) || !e.retryable) throw e;
        const delay = attempt > this.o.retries ? undefined : this.delayFor(e, attempt);
        if (delay === undefined) throw afterAttempts(e, attempt);
        this.stats.retries++;
        await new Promise((resolve) => setTimeout(resolve, delay));
      }
    }
  }

  /** Free pooled connections. */
  async close(): Promise<void> {
    await this.agent.close();
  }

  private delayFor(e: RegistryError, attempt: number): number | undefined {
    if (e.retryAfterMs !== undefined)
      return e.retryAfterMs > maxRetryAfterMs ? undefined : e.retryAfterMs;
    const ceiling = Math.min(maxBackoffMs, this.o.backoffMs * 2 ** (attempt - 1));
    // Jitter keeps many clients that failed together from retrying together.
    return ceiling / 2 + Math.random() * (ceiling / 2);
  }

  private async attempt<T>(
    req: HttpRequest,
    consume: (res: RegistryResponse) => Promise<T>,
  ): Promise<T> {
    const subject: RequestSubject = { registry: this.registry, what: req.what };
    const release = await this.slots.acquire();
    const controller = new AbortController();
    const state = { timedOut: false };
    const timer = setTimeout(() => {
      state.timedOut = true;
      controller.abort();
    }, this.o.timeoutMs);
    const cancel = (): void => {
      controller.abort();
    };
    req.signal?.addEventListener('abort', cancel, { once: true });
    let res: RegistryResponse | undefined;
    try {
      res = await this.authorized(req, controller.signal);
      if (res.status >= 300 && !(req.accept ?? []).includes(res.status))
        throw await this.failure(res, subject);
      return await consume(res);
    } catch (e) {
      // A consumer that failed may have left the body half read: free its connection.
      if (res !== undefined) abandon(res.body);
      if (e instanceof MoltError) throw e;
      throw errorForTransport(subject, e, state.timedOut ? this.o.timeoutMs : undefined);
    } finally {
      clearTimeout(timer);
      req.signal?.removeEventListener('abort', cancel);
      release();
    }
  }

  private async failure(res: RegistryResponse, subject: RequestSubject): Promise<RegistryError> {
    const body = await readErrorText(res);
    const retryAfterMs = parseRetryAfter(res.headers.get('retry-after'), Date.now());
    return errorForStatus(subject, {
      status: res.status,
      body,
      hasCredentials: this.hasCredentials,
      withheldCredentials: this.withheldCredentials,
      ...(retryAfterMs !== undefined && { retryAfterMs }),
    });
  }

  /** Send with whatever auth is known; on a 401 challenge, learn it and try once more. */
  private async authorized(req: HttpRequest, signal: AbortSignal): Promise<RegistryResponse> {
    const sent = await this.auth.authorization(req.scopes);
    const res = await this.send(req, sent, signal);
    if (res.status !== 401) return res;
    const scopes = this.auth.challenged(res.headers.get('www-authenticate'), req.scopes, sent);
    if (scopes === undefined) return res;
    const retryAuth = await this.auth.authorization(scopes);
    if (retryAuth === undefined) return res;
    await discard(res);
    return this.send(req, retryAuth, signal);
  }

  /**
   * Follow redirects by hand: `Authorization` goes only to the registry's own origin, never to
   * the storage host a blob redirect points at (distribution-spec: MUST NOT forward across hosts).
   */
  private async send(
    req: HttpRequest,
    authorization: string | undefined,
    signal: AbortSignal,
  ): Promise<RegistryResponse> {
    this.stats[req.kind]++;
    let url = new URL(req.url, this.origin);
    let method: HttpRequest['method'] = req.method;
    let body = req.body;
    for (let hop = 0; hop <= maxRedirects; hop++) {
      this.checkScheme(url);
      const headers: Record<string, string> = { ...req.headers };
      if (authorization !== undefined && url.origin === this.origin.origin)
        headers['authorization'] = authorization;
      // The dispatcher API rather than fetch: it does not follow redirects by itself, and it
      // reads a large blob at a fraction of fetch's CPU cost (benchmark P5).
      const res = responseOf(
        await this.agent.request({
          origin: url.origin,
          path: `${url.pathname}${url.search}`,
          method,
          headers,
          body: body ?? null,
          signal,
          highWaterMark: bodyHighWaterMark,
        }),
      );
      const location = res.headers.get('location');
      if (!redirectStatuses.has(res.status) || location === null) return res;
      await discard(res);
      url = new URL(location, url);
      if (res.status === 303) {
        method = 'GET';
        body = undefined;
      }
    }
    throw new RegistryError(
      ErrorCode.RegistryProtocol,
      `registry ${this.registry} redirected ${req.what} more than ${maxRedirects} times`,
    );
  }

  private checkScheme(url: URL): void {
    if (url.protocol === 'https:' || (url.protocol === 'http:' && this.o.insecure)) return;
    throw new RegistryError(
      ErrorCode.RegistryProtocol,
      `registry ${this.registry} sent molt to ${url.origin}, which is not https`,
      {
        hint: 'plain HTTP is allowed only with --insecure',
      },
    );
  }

  private async requestToken(
    url: string,
    headers: Record<string, string>,
  ): Promise<{ status: number; body: string }> {
    this.stats.token++;
    const target = new URL(url);
    this.checkScheme(target);
    const signal = AbortSignal.timeout(this.o.timeoutMs);
    try {
      const res = responseOf(
        await this.agent.request({
          origin: target.origin,
          path: `${target.pathname}${target.search}`,
          method: 'GET',
          headers,
          signal,
        }),
      );
      return { status: res.status, body: await readErrorText(res, 1024 * 1024) };
    } catch (e) {
      const timedOut = signal.aborted;
      throw errorForTransport(
        { registry: this.registry, what: `a token from ${target.origin}` },
        e,
        timedOut ? this.o.timeoutMs : undefined,
      );
    }
  }
}
