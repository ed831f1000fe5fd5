// SPDX-License-Identifier: Apache-2.0
/**
 * The machine's bootloader configuration (docs/adr/0004 §4). Adapters: `adapters/grub`,
 * `adapters/sdboot`; fake: `bootloader.fake.ts`; one conformance suite runs against all three.
 * Every write is temp file + fsync + rename + fsync of the directory; every method compares
 * before writing, so calling it again after a crash is harmless.
 */
import type { SlotId, SlotManifest } from '../../core/slots/slot.ts';
import type { BootView } from '../../protocol/agent.ts';

export interface Bootloader {
  read(): Promise<BootView>;
  /** Make the slot unbootable: drop its entry (before the slot is overwritten). */
  removeEntry(slot: SlotId): Promise<void>;
  /** Write (or rewrite) the slot's entry from its manifest, without making it the default. */
  writeEntry(slot: SlotId, manifest: SlotManifest): Promise<void>;
  /**
   * The slot's entry is there and boots what `writeEntry(slot, manifest)` would write (kernel,
   * initramfs, options); else `MOLT_BOOTLOADER_INVALID` (or the image's `MOLT_IMAGE_INVALID`).
   * Writes nothing: a rollback checks its target with it before any disruption.
   */
  checkEntry(slot: SlotId, manifest: SlotManifest): Promise<void>;
  /** The next boot, and only the next, boots `slot` (grub `next_entry`, sd-boot `+1` counter). */
  armBootOnce(slot: SlotId): Promise<void>;
  disarmBootOnce(): Promise<void>;
  /** `slot` becomes the default for every later boot. */
  commit(slot: SlotId): Promise<void>;
  /** `slot` failed: never boot it again (until rewritten). */
  markBad(slot: SlotId): Promise<void>;
}
