// SPDX-License-Identifier: Apache-2.0
/** A power button that records reboots; the reboot never returns, as on a real machine. */
import type { Power } from './power.ts';

export function createFakePower(): Power & {
  readonly reboots: string[];
  rebooted(): Promise<void>;
} {
  const reboots: string[] = [];
  let notify: (() => void) | undefined;
  return {
    reboots,
    reboot(reason: string) {
      reboots.push(reason);
      notify?.();
      return new Promise<never>(() => undefined);
    },
    rebooted: () =>
      new Promise<void>((resolve) => {
        notify = resolve;
      }),
  };
}
