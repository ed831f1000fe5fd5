// SPDX-License-Identifier: Apache-2.0
/**
 * The webhook sinks' metrics (docs/adr/0009), fed by the notification dispatcher and the sinks'
 * retries: what was delivered, retried and dropped (and why), and how far each sink is behind.
 * Every configured sink is listed from the start at 0, so `increase()` sees its first drop.
 */
import type { DropReason, NotifyObserver } from '../notify/dispatcher.ts';
import { family, sample } from './exposition.ts';

interface SinkCounts {
  delivered: number;
  retries: number;
  failed: number;
  overflow: number;
  backlog: number;
  checks: number;
}

export class NotificationMetrics implements NotifyObserver {
  readonly #sinks = new Map<string, SinkCounts>();

  constructor(sinks: readonly string[]) {
    for (const s of sinks) this.of(s);
  }

  delivered(sink: string): void {
    this.of(sink).delivered++;
  }

  /** A failed attempt the sink will try again. */
  retried(sink: string): void {
    this.of(sink).retries++;
  }

  dropped(sink: string, reason: DropReason, count: number): void {
    this.of(sink)[reason] += count;
  }

  backlog(sink: string, events: number): void {
    this.of(sink).backlog = events;
  }

  checked(sink: string): void {
    this.of(sink).checks++;
  }

  /** Each sink's counts, in the order the sinks were named. */
  entries(): [string, Readonly<SinkCounts>][] {
    return [...this.#sinks.entries()];
  }

  private of(sink: string): SinkCounts {
    let c = this.#sinks.get(sink);
    if (c === undefined) {
      c = { delivered: 0, retries: 0, failed: 0, overflow: 0, backlog: 0, checks: 0 };
      this.#sinks.set(sink, c);
    }
    return c;
  }
}

export function notifyFamilies(m: NotificationMetrics): string[] {
  const sinks = m.entries();
  return [
    ...family(
      'molt_operator_webhook_deliveries_total',
      'counter',
      'Notifications a webhook sink accepted (2xx).',
      sinks.map(([sink, c]) =>
        sample('molt_operator_webhook_deliveries_total', { sink }, c.delivered),
      ),
    ),
    ...family(
      'molt_operator_webhook_retries_total',
      'counter',
      'Failed delivery attempts that were tried again (network errors, timeouts, 5xx, 429).',
      sinks.map(([sink, c]) => sample('molt_operator_webhook_retries_total', { sink }, c.retries)),
    ),
    ...family(
      'molt_operator_webhook_dropped_total',
      'counter',
      'Notifications never delivered: the sink gave up (failed) or was too far behind (overflow).',
      sinks.flatMap(([sink, c]) =>
        (['failed', 'overflow'] as const).map((reason) =>
          sample('molt_operator_webhook_dropped_total', { sink, reason }, c[reason]),
        ),
      ),
    ),
    ...family(
      'molt_operator_webhook_checks_total',
      'counter',
      // A sink's worker that stopped looking (stuck on a hung delivery) shows as a flat line here.
      'Looks at the history by a webhook sink (the leader only), whether or not they found events.',
      sinks.map(([sink, c]) => sample('molt_operator_webhook_checks_total', { sink }, c.checks)),
    ),
    ...family(
      'molt_operator_webhook_backlog',
      'gauge',
      'History events a webhook sink has yet to be sent (as of its last look; the leader only).',
      sinks.map(([sink, c]) => sample('molt_operator_webhook_backlog', { sink }, c.backlog)),
    ),
  ];
}
