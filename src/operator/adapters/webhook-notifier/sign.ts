// SPDX-License-Identifier: Apache-2.0
/**
 * Signing webhook deliveries (docs/adr/0009, `protocol/notifications.ts`): an HMAC-SHA256, keyed
 * with the sink's shared secret, of `<timestamp>.<body>` — the timestamp inside the signature, as
 * GitHub's and Stripe's webhooks do, so a receiver that refuses old timestamps refuses a recorded
 * delivery replayed later, and an attacker cannot move the timestamp without the secret.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { WebhookHeaders } from '../../../protocol/notifications.ts';

/** `sha256=<hex>` of `<timestamp>.<body>`. */
export function signature(secret: Uint8Array, timestamp: number, body: string): string {
  const mac = createHmac('sha256', secret).update(`${String(timestamp)}.${body}`);
  return `sha256=${mac.digest('hex')}`;
}

/** The timestamp and signature headers of one attempt at `nowMs`. */
export function signatureHeaders(
  secret: Uint8Array,
  body: string,
  nowMs: number,
): Record<string, string> {
  const timestamp = Math.floor(nowMs / 1000);
  return {
    [WebhookHeaders.timestamp]: String(timestamp),
    [WebhookHeaders.signature]: signature(secret, timestamp, body),
  };
}

/** What a receiver got: the two headers (as sent, maybe absent) and the raw body. */
export interface SignedDelivery {
  readonly body: string;
  readonly timestamp: string | undefined;
  readonly signature: string | undefined;
}

/**
 * A receiver's check: the signature is the HMAC of this body at this timestamp, and the timestamp
 * is within `toleranceSeconds` of `nowMs` (a replay is older). Constant-time comparison.
 */
export function verifySignature(
  secret: Uint8Array,
  d: SignedDelivery,
  nowMs: number,
  toleranceSeconds = 300,
): boolean {
  if (d.timestamp === undefined || d.signature === undefined) return false;
  if (!/^\d{1,12}$/.test(d.timestamp)) return false;
  const timestamp = Number(d.timestamp);
  if (Math.abs(nowMs / 1000 - timestamp) > toleranceSeconds) return false;
  const expected = Buffer.from(signature(secret, timestamp, d.body));
  const given = Buffer.from(d.signature);
  return given.length === expected.length && timingSafeEqual(given, expected);
}
