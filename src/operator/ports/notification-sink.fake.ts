// SPDX-License-Identifier: Apache-2.0
/** A {@link NotificationSink} in memory: keeps what it was given, fails or stalls when told to. */
import { ErrorCode, MoltError } from '../../core/errors.ts';
import type { Notification, NotificationSink } from './notification-sink.ts';

export class FakeNotificationSink implements NotificationSink {
  readonly delivered: Notification[] = [];
  /** Every call of `deliver`, accepted or not. */
  readonly attempts: Notification[] = [];
  /** Refuse (give up on) the next this many deliveries. */
  failNext = 0;
  /** While set, `deliver` waits for it (or the abort) before answering. */
  stall: Promise<void> | undefined;

  readonly name: string;
  private readonly kinds: (kind: string) => boolean;

  constructor(name: string, kinds: (kind: string) => boolean = () => true) {
    this.name = name;
    this.kinds = kinds;
  }

  wants(kind: string): boolean {
    return this.kinds(kind);
  }

  async deliver(n: Notification, signal: AbortSignal): Promise<void> {
    this.attempts.push(n);
    if (this.stall !== undefined)
      await Promise.race([
        this.stall,
        new Promise((resolve) => {
          signal.addEventListener('abort', resolve, { once: true });
        }),
      ]);
    signal.throwIfAborted();
    if (this.failNext > 0) {
      this.failNext--;
      throw new MoltError(ErrorCode.WebhookRefused, `${this.name}: refused ${n.id}`);
    }
    this.delivered.push(n);
  }
}
