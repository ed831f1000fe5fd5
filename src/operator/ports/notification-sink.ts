// SPDX-License-Identifier: Apache-2.0
/**
 * Where the operator's transitions are announced (docs/adr/0009): one sink per `notifications`
 * entry of the config. The dispatcher (`notify/dispatcher.ts`) walks the history and hands each
 * event a sink wants to {@link NotificationSink.deliver}, one at a time, in order; a sink owns how
 * it delivers and how long it keeps trying. Implementations: webhooks
 * (`adapters/webhook-notifier`) and {@link FakeNotificationSink} for tests.
 */
import type { WebhookNotification } from '../../protocol/notifications.ts';

/** One history event as the sinks see it (the `format: json` body). */
export type Notification = WebhookNotification;

export interface NotificationSink {
  /** The config's name: the key of the sink's cursor in the store and its metrics' label. */
  readonly name: string;
  /** Whether the sink's `events` globs take notifications of `kind`. */
  wants(kind: string): boolean;
  /**
   * Deliver `n`, retrying within the sink's bounds (attempts, total time). Resolves once the
   * receiver accepted it; rejects with a `MoltError` once the sink gives up (the dispatcher then
   * drops the event), or when `signal` aborts (the operator stops or lost the leadership: the
   * event stays unhandled and the next leader sends it).
   */
  deliver(n: Notification, signal: AbortSignal): Promise<void>;
}
