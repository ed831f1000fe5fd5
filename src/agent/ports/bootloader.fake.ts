// SPDX-License-Identifier: Apache-2.0
/**
 * In-memory bootloader with GRUB's semantics (one `next_entry`, one `saved_entry`, an entry per
 * slot). Passes `bootloaderConformance` like the real adapters. `firmwareBoot()` plays one boot:
 * the armed slot once, else the committed one. `failures` makes the next call of a method throw.
 */
import { bootEntryMismatch, slotBootEntry } from '../../core/boot/slot-entry.ts';
import { ErrorCode, MoltError } from '../../core/errors.ts';
import type { SlotId, SlotManifest } from '../../core/slots/slot.ts';
import type { BootEntryView, BootView } from '../../protocol/agent.ts';
import type { Bootloader } from './bootloader.ts';

export interface FakeBootloader extends Bootloader {
  /** Slots with an entry, and the manifest each was written from. */
  readonly entries: Map<SlotId, SlotManifest>;
  committed: SlotId | null;
  oneShot: SlotId | null;
  /** Method name → error thrown (once) by its next call. */
  readonly failures: Map<keyof Bootloader, Error>;
  /** Every mutating call, e.g. `armBootOnce B` (for assertions on order). */
  readonly calls: string[];
  /** One boot: consumes the boot-once; returns the slot that boots, or null when none has an entry. */
  firmwareBoot(): SlotId | null;
}

export function createFakeBootloader(): FakeBootloader {
  const fake: FakeBootloader = {
    entries: new Map(),
    committed: null,
    oneShot: null,
    failures: new Map(),
    calls: [],
    read: () => step('read', () => view()),
    removeEntry: (slot) =>
      step(`removeEntry ${slot}`, () => {
        drop(slot);
      }),
    markBad: (slot) =>
      step(`markBad ${slot}`, () => {
        drop(slot);
      }),
    writeEntry: (slot, manifest) =>
      step(`writeEntry ${slot}`, () => void fake.entries.set(slot, manifest)),
    checkEntry: (slot, manifest) =>
      step('read', () => {
        const written = fake.entries.get(slot);
        if (written === undefined)
          throw new MoltError(ErrorCode.BootloaderInvalid, `slot ${slot} has no boot entry`);
        // Without a disk the fake renders both entries without their cmdline.
        const why = bootEntryMismatch(slotBootEntry(slot, manifest), slotBootEntry(slot, written));
        if (why !== undefined)
          throw new MoltError(
            ErrorCode.BootloaderInvalid,
            `the boot entry of slot ${slot}: ${why}`,
          );
      }),
    armBootOnce: (slot) => step(`armBootOnce ${slot}`, () => void (fake.oneShot = need(slot))),
    disarmBootOnce: () => step('disarmBootOnce', () => void (fake.oneShot = null)),
    commit: (slot) =>
      step(`commit ${slot}`, () => {
        fake.committed = need(slot);
        fake.oneShot = null;
      }),
    firmwareBoot() {
      const armed = fake.oneShot;
      fake.oneShot = null;
      if (armed !== null && fake.entries.has(armed)) return armed;
      return effectiveCommitted();
    },
  };

  function step<T>(call: string, run: () => T): Promise<T> {
    const method = call.split(' ')[0] as keyof Bootloader;
    const failure = fake.failures.get(method);
    if (failure !== undefined) {
      fake.failures.delete(method);
      return Promise.reject(failure);
    }
    if (method !== 'read') fake.calls.push(call);
    try {
      return Promise.resolve(run());
    } catch (error) {
      return Promise.reject(error instanceof Error ? error : new Error(String(error)));
    }
  }

  function need(slot: SlotId): SlotId {
    if (!fake.entries.has(slot))
      throw new MoltError(ErrorCode.BootloaderInvalid, `slot ${slot} has no boot entry`);
    return slot;
  }

  function drop(slot: SlotId): void {
    fake.entries.delete(slot);
    if (fake.oneShot === slot) fake.oneShot = null;
  }

  /** Like GRUB: `saved_entry`'s entry, else the first entry. */
  function effectiveCommitted(): SlotId | null {
    if (fake.committed !== null && fake.entries.has(fake.committed)) return fake.committed;
    return (['A', 'B'] as const).find((s) => fake.entries.has(s)) ?? null;
  }

  function view(): BootView {
    const committed = effectiveCommitted();
    const entries: BootEntryView[] = (['A', 'B'] as const)
      .filter((s) => fake.entries.has(s))
      .map((slot) => ({
        slot,
        state: slot === committed ? 'committed' : slot === fake.oneShot ? 'trial' : 'bootable',
      }));
    return { bootloader: 'grub', committed, oneShot: fake.oneShot, entries };
  }

  return fake;
}
