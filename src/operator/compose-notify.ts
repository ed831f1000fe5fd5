// SPDX-License-Identifier: Apache-2.0
/**
 * The operator's webhook notifications, part of its composition root (docs/adr/0009): a webhook
 * sink per `notifications` entry of the config, with the secret the config loader read, and the
 * dispatcher that sends them the history while this operator leads.
 */
import { createWebhookSink } from './adapters/webhook-notifier/index.ts';
import type { OperatorMetrics } from './api/metrics.ts';
import type { LoadedConfig } from './config.ts';
import { startNotifications, type Notifications } from './notify/dispatcher.ts';
import type { Leadership } from './ports/leadership.ts';
import type { OperatorStore } from './ports/store.ts';

export interface NotifyParts {
  readonly store: OperatorStore;
  readonly leadership: Leadership;
  readonly metrics: OperatorMetrics;
  readonly log: (line: string) => void;
}

/** Start sending the history to the config's sinks; undefined when it names none. */
export function startConfiguredNotifications(
  c: LoadedConfig,
  p: NotifyParts,
): Notifications | undefined {
  if (c.config.notifications.length === 0) return undefined;
  const sinks = c.config.notifications.map((n) => {
    const secret = c.notificationSecrets.get(n.name);
    return createWebhookSink({
      name: n.name,
      url: n.url,
      format: n.format,
      events: n.events,
      timeoutMs: n.timeout,
      ...(secret !== undefined && { secret }),
      onRetry: () => {
        p.metrics.notifications.retried(n.name);
      },
    });
  });
  return startNotifications({
    store: p.store,
    sinks,
    isLeader: () => p.leadership.isLeader(),
    log: p.log,
    observer: p.metrics.notifications,
  });
}
