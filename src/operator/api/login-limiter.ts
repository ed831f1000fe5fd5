// SPDX-License-Identifier: Apache-2.0
/**
 * How often the dashboard lets anyone try a token (docs/adr/0007 §12). Only failures count: a
 * token bucket per client address, drawn by each wrong token, and one for the whole listener. A
 * client address is grouped as the listeners admit sockets (`addressKey`: IPv6 by its /64): one
 * host usually holds a whole /64, and counted by single addresses it would get a fresh bucket —
 * and during a flood, one more guess — from each of them. An
 * address whose bucket is empty is refused before its token is looked at; the listener's bucket
 * never refuses anyone by itself. It used to be drawn before the token was checked, so guesses
 * from many addresses (one a second was enough) emptied it and every real sign-in was refused: an
 * attacker spent the users' sign-ins. Now, while failures from everywhere keep it empty, each
 * wrong token empties its own address's bucket instead of taking one, so a flood from many
 * addresses gets one guess per address per refill period, and a right token from an address that
 * has not failed is always let in. Tokens are 256-bit random values, so this is defence in depth
 * against weak hand-made tokens and against using the listener to burn CPU, not what makes
 * guessing hopeless.
 */
import { makeRoom } from '../../core/bounded.ts';
import { addressKey } from '../../platform/https/admission.ts';

/** A bucket's size and how fast it refills. */
export interface BucketRate {
  /** Failures allowed at once. */
  readonly burst: number;
  /** One failure is forgotten every `refillMs`. */
  readonly refillMs: number;
}

/** Options of {@link LoginLimiter}. */
export interface LoginLimiterOptions {
  /** @default 5 at once, one more every 12 s */
  readonly perClient?: BucketRate;
  /** @default 30 at once, one more every second */
  readonly overall?: BucketRate;
  /** Client address groups remembered at most (the oldest is forgotten first). @default 10000 */
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

/** Take `n` (at most all); a full bucket starts its refill period now. */
function take(b: Bucket, rate: BucketRate, now: number, n: number): void {
  if (b.tokens >= rate.burst) b.at = now;
  b.tokens = Math.max(0, b.tokens - n);
}

const waitFor = (b: Bucket, rate: BucketRate, now: number): number =>
  Math.max(1, b.at + rate.refillMs - now);

/** Failed sign-ins, counted per client address group (IPv6: per /64) and overall. */
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

  /**
   * Whether `client` (its address) may try a token now: refused only while its own failures have
   * emptied its bucket. Draws nothing; {@link fail} counts a wrong token.
   */
  check(client: string): LimitVerdict {
    const now = this.o.now();
    const mine = this.clients.get(addressKey(client));
    if (mine === undefined) return { ok: true };
    refill(mine, this.perClientRate, now);
    if (mine.tokens >= 1) return { ok: true };
    return { ok: false, retryAfterMs: waitFor(mine, this.perClientRate, now) };
  }

  /**
   * Count a wrong token from `client`: one from its bucket and one from the listener's; while
   * the listener's is empty (failures from many addresses), its whole bucket.
   */
  fail(client: string): void {
    const now = this.o.now();
    const mine = this.bucketOf(addressKey(client), now);
    refill(mine, this.perClientRate, now);
    refill(this.overall, this.overallRate, now);
    const flood = this.overall.tokens < 1;
    take(mine, this.perClientRate, now, flood ? mine.tokens : 1);
    if (!flood) take(this.overall, this.overallRate, now, 1);
  }

  private bucketOf(group: string, now: number): Bucket {
    const known = this.clients.get(group);
    if (known !== undefined) return known;
    makeRoom(this.clients, this.o.maxClients ?? 10_000);
    const fresh = { tokens: this.perClientRate.burst, at: now };
    this.clients.set(group, fresh);
    return fresh;
  }
}
