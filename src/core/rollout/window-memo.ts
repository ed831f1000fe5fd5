// SPDX-License-Identifier: Apache-2.0
/**
 * Window policies evaluated once per plan: a croner call costs ~40 µs, so judging each machine
 * separately would cost seconds on 100 000 machines. The memo is keyed by the policy object.
 */
import { allowedAt, describeInstant, nextOpening, type Opening } from './windows.ts';
import type { WindowRule } from './rules.ts';

export interface WindowVerdict {
  readonly open: boolean;
  /** When closed: the next opening within the horizon, if any. */
  readonly opening: Opening | undefined;
  /** When closed: `window closed; opens 2026-11-24T02:00:00.000Z (Europe/Berlin 03:00)`. */
  readonly message: string;
}

export class WindowMemo {
  private readonly verdicts = new Map<WindowRule, WindowVerdict>();
  private readonly now: number;

  constructor(now: number) {
    this.now = now;
  }

  verdict(rule: WindowRule): WindowVerdict {
    let v = this.verdicts.get(rule);
    if (v === undefined) {
      v = evaluate(rule, this.now);
      this.verdicts.set(rule, v);
    }
    return v;
  }
}

function evaluate(rule: WindowRule, now: number): WindowVerdict {
  if (allowedAt(rule, now)) return { open: true, opening: undefined, message: '' };
  const opening = nextOpening(rule, now);
  const message =
    opening === undefined
      ? 'window closed; no opening within 366 days'
      : `window closed; opens ${describeInstant(opening.at, opening.window.timeZone)}`;
  return { open: false, opening, message };
}
