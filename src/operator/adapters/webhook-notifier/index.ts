// SPDX-License-Identifier: Apache-2.0
/**
 * {@link NotificationSink} by HTTP POST (docs/adr/0009): the body in the sink's format
 * (`body.ts`), signed when it has a secret (`sign.ts`, a fresh timestamp per attempt), with the
 * event id and kind as headers (`protocol/notifications.ts`).
 *
 * Any 2xx is accepted. A transport failure, an attempt past its `timeoutMs`, 408, 429 and 5xx are
 * `MOLT_WEBHOOK_UNREACHABLE` and retried with exponential backoff and jitter (cockatiel; a
 * `Retry-After` is honoured up to the longest delay) — at most `attempts` times and
 * `maxElapsedMs` in all; then the sink gives up and the dispatcher drops the event. Anything else
 * (a 4xx, a redirect: a URL to fix) is `MOLT_WEBHOOK_REFUSED` at once. Messages name the URL's
 * origin only: a Slack webhook's path is its secret.
 */
import { posix } from 'node:path';
import {
  ExponentialBackoff,
  handleWhen,
  retry,
  timeout,
  TimeoutStrategy,
  wrap,
  type IBackoff,
  type IBackoffFactory,
  type IRetryBackoffContext,
} from 'cockatiel';
import { fetch } from 'undici';
import { ErrorCode, errorMessage, isMoltError, MoltError } from '../../../core/errors.ts';
import { WebhookHeaders } from '../../../protocol/notifications.ts';
import type { Notification, NotificationSink } from '../../ports/notification-sink.ts';
import { bodyOf, type WebhookFormat } from './body.ts';
import { signatureHeaders } from './sign.ts';

/** How hard a sink tries before it gives an event up. */
export interface WebhookRetry {
  /** Attempts in all, the first included. @default 6 */
  readonly attempts?: number;
  /** @default 500 */
  readonly initialDelayMs?: number;
  /** @default 30000 */
  readonly maxDelayMs?: number;
  /** All attempts and waits of one event. @default 120000 */
  readonly maxElapsedMs?: number;
}

export interface WebhookSinkOptions {
  readonly name: string;
  readonly url: string;
  readonly format: WebhookFormat;
  /** The shared secret; without one, deliveries are not signed. */
  readonly secret?: Uint8Array;
  /** Globs of notification kinds (`rollout.*`). */
  readonly events: readonly string[];
  /** One attempt's deadline. */
  readonly timeoutMs: number;
  readonly retry?: WebhookRetry;
  /** Told about each failed attempt that will be tried again (a metric). */
  readonly onRetry?: (error: unknown) => void;
  /** Epoch ms, for the signature's timestamp. */
  readonly now?: () => number;
}

const RETRYABLE = new Set([408, 429]);

/** `Retry-After` (seconds or an HTTP date) in ms; undefined when absent or unreadable. */
export function retryAfterMs(value: string | null, nowMs: number): number | undefined {
  if (value === null) return undefined;
  if (/^\d{1,9}$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - nowMs);
}

type Ctx = IRetryBackoffContext<unknown>;

/** What a failed attempt's `Retry-After` asked for, in ms. */
const askedBy = (c: Ctx): unknown =>
  'error' in c.result && isMoltError(c.result.error)
    ? c.result.error.details?.['retryAfterMs']
    : undefined;

/** The exponential backoff, lengthened to what a 429/503's `Retry-After` asks (up to `maxMs`). */
function honouringRetryAfter(inner: IBackoffFactory<Ctx>, maxMs: number): IBackoffFactory<Ctx> {
  const step = (b: IBackoff<Ctx>, asked: unknown): IBackoff<Ctx> => ({
    duration: typeof asked === 'number' ? Math.min(maxMs, Math.max(asked, b.duration)) : b.duration,
    next: (c) => step(b.next(c), askedBy(c)),
  });
  return { next: (c) => step(inner.next(c), askedBy(c)) };
}

export function createWebhookSink(o: WebhookSinkOptions): NotificationSink {
  const r = o.retry ?? {};
  const origin = new URL(o.url).origin;
  const now = o.now ?? Date.now;
  const maxDelayMs = r.maxDelayMs ?? 30_000;
  const maxElapsedMs = r.maxElapsedMs ?? 120_000;
  const backoff = new ExponentialBackoff({
    initialDelay: r.initialDelayMs ?? 500,
    maxDelay: maxDelayMs,
  });
  const retries = retry(
    handleWhen((e) => isMoltError(e, ErrorCode.WebhookUnreachable)),
    {
      maxAttempts: Math.max(0, (r.attempts ?? 6) - 1),
      backoff: honouringRetryAfter(backoff, maxDelayMs),
    },
  ).dangerouslyUnref(); // a wait between attempts never keeps a stopping operator alive
  retries.onRetry((e) => o.onRetry?.('error' in e ? e.error : e.value));
  const policy = wrap(
    timeout(maxElapsedMs, TimeoutStrategy.Aggressive).dangerouslyUnref(),
    retries,
  );

  const attempt = async (n: Notification, body: string, signal: AbortSignal): Promise<void> => {
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'user-agent': 'molt-operator',
      [WebhookHeaders.eventId]: n.id,
      [WebhookHeaders.event]: n.kind,
      ...(o.secret !== undefined && signatureHeaders(o.secret, body, now())),
    };
    let res: Awaited<ReturnType<typeof fetch>>;
    try {
      res = await fetch(o.url, {
        method: 'POST',
        body,
        headers,
        redirect: 'manual',
        signal: AbortSignal.any([signal, AbortSignal.timeout(o.timeoutMs)]),
      });
    } catch (e) {
      const inner = e instanceof Error && e.cause instanceof Error ? `: ${e.cause.message}` : '';
      throw new MoltError(
        ErrorCode.WebhookUnreachable,
        `sink ${o.name} at ${origin}: ${errorMessage(e)}${inner}`,
        { cause: e, retryable: true },
      );
    }
    await res.body?.cancel();
    if (res.status >= 200 && res.status < 300) return;
    const answered = `sink ${o.name} at ${origin} answered ${String(res.status)}`;
    if (RETRYABLE.has(res.status) || res.status >= 500) {
      const after = retryAfterMs(res.headers.get('retry-after'), now());
      throw new MoltError(ErrorCode.WebhookUnreachable, answered, {
        retryable: true,
        details: { status: res.status, ...(after !== undefined && { retryAfterMs: after }) },
      });
    }
    throw new MoltError(ErrorCode.WebhookRefused, answered, {
      details: { status: res.status },
      hint: `check notifications.${o.name} in the operator config (its url, and the receiver's secret)`,
    });
  };

  return {
    name: o.name,
    wants: (kind) => o.events.some((glob) => posix.matchesGlob(kind, glob)),
    async deliver(n, signal) {
      const body = bodyOf(o.format, n);
      let last: unknown;
      try {
        await policy.execute(
          ({ signal: s }) =>
            attempt(n, body, s).catch((e: unknown) => {
              last = e;
              throw e;
            }),
          signal,
        );
      } catch (e) {
        if (isMoltError(e) || signal.aborted) throw e;
        // The aggressive timeout's TaskCancelledError: every attempt and wait took too long.
        const why = last instanceof Error ? ` (last: ${last.message})` : '';
        throw new MoltError(
          ErrorCode.WebhookUnreachable,
          `sink ${o.name} at ${origin}: no delivery within ${String(maxElapsedMs / 1000)} s${why}`,
          { cause: e, retryable: true },
        );
      }
    },
  };
}
