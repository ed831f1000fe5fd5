// SPDX-License-Identifier: Apache-2.0
/**
 * How often the dashboard lets anyone try a token (docs/adr/0007 §12): a token bucket per client
 * address and one for the whole listener, so guessing is slow from one address and from many.
 * Tokens are 256-bit random values, so this is defence in depth against weak hand-made tokens and
 * against using the listener to burn CPU, not what makes guessing hopeless.
 */
import { makeRoom } from '../../core/bounded.ts';

/** A bucket's size and how fast it refills. */
export interface BucketRate {
  /** Attempts allowed at once. */
  readonly burst: number;
  /** One attempt comes back every `refillMs`. */
  readonly refillMs: number;
}

/** Options of {@link LoginLimiter}. */
export interface LoginLimiterOptions {
  /** @default 5 at once, one more every 12 s */
  readonly perClient?: BucketRate;
  /** @default 30 at once, one more every second */
  readonly overall?: BucketRate;
  /** Client addresses remembered at most (the oldest is forgotten first). @default 10000 */
  readonly maxClients?: number;
  /** Epoch ms. */
  readonly now: () => number;
}

/** An attempt's verdict: go ahead, or wait this long. */
export type LimitVerdict =
  { readonly ok: true } | { readonly ok: false; readonly retryAfterMs: number };

interface Bucket {
  tokens: number;
  at: number;
}

function refill(b: Bucket, rate: BucketRate, now: number): void {
  const back = Math.floor((now - b.at) / rate.refillMs);
  if (back <= 0) return;
  b.tokens = Math.min(rate.burst, b.tokens + back);
  b.at = b.tokens === rate.burst ? now : b.at + back * rate.refillMs;
}

const waitFor = (b: Bucket, rate: BucketRate, now: number): number =>
  Math.max(1, b.at + rate.refillMs - now);

/** Sign-in attempts, limited per client address and overall. */
export class LoginLimiter {
  private readonly clients = new Map<string, Bucket>();
  private readonly overall: Bucket;
  private readonly perClientRate: BucketRate;
  private readonly overallRate: BucketRate;

  private readonly o: LoginLimiterOptions;

  constructor(o: LoginLimiterOptions) {
    this.o = o;
    this.perClientRate = o.perClient ?? { burst: 5, refillMs: 12_000 };
    this.overallRate = o.overall ?? { burst: 30, refillMs: 1_000 };
    this.overall = { tokens: this.overallRate.burst, at: o.now() };
  }

  /** Take one attempt for `client` (its address); refused when either bucket is empty. */
  attempt(client: string): LimitVerdict {
    const now = this.o.now();
    const mine = this.bucketOf(client, now);
    refill(mine, this.perClientRate, now);
    refill(this.overall, this.overallRate, now);
    if (mine.tokens < 1) return { ok: false, retryAfterMs: waitFor(mine, this.perClientRate, now) };
    if (this.overall.tokens < 1)
      return { ok: false, retryAfterMs: waitFor(this.overall, this.overallRate, now) };
    mine.tokens--;
    this.overall.tokens--;
    return { ok: true };
  }

  /** Give back `client`'s attempt: it signed in (only failures count against an address). */
  refund(client: string): void {
    const mine = this.clients.get(client);
    if (mine !== undefined) mine.tokens = Math.min(this.perClientRate.burst, mine.tokens + 1);
    this.overall.tokens = Math.min(this.overallRate.burst, this.overall.tokens + 1);
  }

  private bucketOf(client: string, now: number): Bucket {
    const known = this.clients.get(client);
    if (known !== undefined) return known;
    makeRoom(this.clients, this.o.maxClients ?? 10_000);
    const fresh = { tokens: this.perClientRate.burst, at: now };
    this.clients.set(client, fresh);
    return fresh;
  }
}
