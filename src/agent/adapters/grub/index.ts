// SPDX-License-Identifier: Apache-2.0
/**
 * GrubBootloader (docs/adr/0004 §4): `esp/grub/grub.cfg` lists one menuentry per bootable slot;
 * `esp/grub/grubenv` holds the state with the same edits as GRUB's own tools:
 * - arm = `grub-reboot molt-x` (restore a `prev_saved_entry`, then `next_entry=molt-x`);
 * - commit = `grub-set-default molt-x` (unset `prev_saved_entry` and `next_entry`, `saved_entry=molt-x`);
 * - disarm = unset a non-empty `next_entry`; remove / mark bad = drop the menuentry (and a
 *   `next_entry` naming it). GRUB then boots `saved_entry`, or entry 0 when that entry is gone.
 * Every method reads both files, computes the new content and writes only what changed.
 */
import { grubEntryNumber, type GrubMenuEntry } from '../../../core/boot/grub-cfg.ts';
import { grubenvGet, grubenvSet, grubenvUnset, type Grubenv } from '../../../core/boot/grubenv.ts';
import { slotEntryId, slotOfEntryId } from '../../../core/boot/slot-entry.ts';
import { ErrorCode, MoltError } from '../../../core/errors.ts';
import type { SlotId, SlotManifest } from '../../../core/slots/slot.ts';
import type { BootEntryView, BootView } from '../../../protocol/agent.ts';
import type { Bootloader } from '../../ports/bootloader.ts';
import { checkWrittenEntry, readSlotBootEntry } from './cmdline.ts';
import {
  grubFiles,
  readEntries,
  readEnv,
  writeEntries,
  writeEnv,
  type GrubFiles,
} from './files.ts';

/** The slot GRUB boots when no boot-once is armed: `saved_entry`'s entry, else entry 0. */
function committedSlot(entries: readonly GrubMenuEntry[], env: Grubenv): SlotId | null {
  const index = grubEntryNumber(entries, grubenvGet(env, 'saved_entry') ?? '');
  const entry = entries[index < 0 || index >= entries.length ? 0 : index];
  return entry === undefined ? null : (slotOfEntryId(entry.id) ?? null);
}

function view(entries: readonly GrubMenuEntry[], env: Grubenv): BootView {
  const committed = committedSlot(entries, env);
  const next = grubenvGet(env, 'next_entry') ?? '';
  const oneShot = entries.some((e) => e.id === next) ? (slotOfEntryId(next) ?? null) : null;
  const list: BootEntryView[] = [];
  for (const e of entries) {
    const slot = slotOfEntryId(e.id);
    if (slot === undefined) continue;
    list.push({
      slot,
      state: slot === committed ? 'committed' : slot === oneShot ? 'trial' : 'bootable',
    });
  }
  return { bootloader: 'grub', committed, oneShot, entries: list };
}

async function requireEntry(files: GrubFiles, slot: SlotId): Promise<string> {
  const id = slotEntryId(slot);
  if (!(await readEntries(files)).some((e) => e.id === id)) {
    throw new MoltError(ErrorCode.BootloaderInvalid, `slot ${slot} has no GRUB menu entry`, {
      hint: 'write the slot and its boot entry before arming or committing it',
    });
  }
  return id;
}

async function dropEntry(files: GrubFiles, slot: SlotId): Promise<void> {
  const id = slotEntryId(slot);
  await writeEntries(
    files,
    (await readEntries(files)).filter((e) => e.id !== id),
  );
  const env = await readEnv(files);
  if (grubenvGet(env, 'next_entry') === id) await writeEnv(files, grubenvUnset(env, 'next_entry'));
}

export function createGrubBootloader(root: string): Bootloader {
  const files = grubFiles(root);
  return {
    async read() {
      return view(await readEntries(files), await readEnv(files));
    },
    removeEntry: (slot) => dropEntry(files, slot),
    markBad: (slot) => dropEntry(files, slot),
    async writeEntry(slot: SlotId, manifest: SlotManifest) {
      const e = await readSlotBootEntry(root, slot, manifest);
      const entry: GrubMenuEntry = {
        id: e.id,
        title: e.title,
        linux: e.linux,
        options: e.options,
        ...(e.initrd === undefined ? {} : { initrd: e.initrd }),
      };
      await writeEntries(files, [
        ...(await readEntries(files)).filter((x) => x.id !== e.id),
        entry,
      ]);
    },
    async checkEntry(slot: SlotId, manifest: SlotManifest) {
      const id = slotEntryId(slot);
      const written = (await readEntries(files)).find((e) => e.id === id);
      await checkWrittenEntry(root, slot, manifest, written);
    },
    async armBootOnce(slot) {
      const id = await requireEntry(files, slot);
      let env = await readEnv(files);
      const prev = grubenvGet(env, 'prev_saved_entry') ?? '';
      if (prev !== '') env = grubenvUnset(grubenvSet(env, 'saved_entry', prev), 'prev_saved_entry');
      await writeEnv(files, grubenvSet(env, 'next_entry', id));
    },
    async disarmBootOnce() {
      const env = await readEnv(files);
      if ((grubenvGet(env, 'next_entry') ?? '') !== '')
        await writeEnv(files, grubenvUnset(env, 'next_entry'));
    },
    async commit(slot) {
      const id = await requireEntry(files, slot);
      const env = grubenvUnset(
        grubenvUnset(await readEnv(files), 'prev_saved_entry'),
        'next_entry',
      );
      await writeEnv(files, grubenvSet(env, 'saved_entry', id));
    },
  };
}
