// SPDX-License-Identifier: Apache-2.0
/**
 * GrubBootloader (docs/adr/0004 §4, files in core/boot/grub-cfg.ts): grub.cfg is written once and
 * never changed; every change of state is an in-place rewrite of `esp/grub/grubenv`, with the
 * same edits as GRUB's own tools:
 * - a slot may boot while `molt_<x>=ok` (set by writeEntry with `molt_<x>_version`, its menu
 *   title's version; unset by removeEntry and markBad, with a `next_entry` naming it); its entry
 *   file `esp/molt/<x>/grub.cfg` is rewritten only while unset;
 * - arm = `grub-reboot molt-x` (restore a `prev_saved_entry`, then `next_entry=molt-x`);
 * - commit = `grub-set-default molt-x` (unset `prev_saved_entry` and `next_entry`, `saved_entry=molt-x`);
 * - disarm = unset a non-empty `next_entry`.
 * GRUB then boots `saved_entry`, or entry 0 when that entry is gone. Every method reads first and
 * writes only what changed.
 */
import {
  grubEntryNumber,
  grubMenu,
  grubSlotVar,
  GrubSlotOk,
  grubTitleVersion,
  grubVersionVar,
  renderGrubEntry,
  type GrubMenuItem,
} from '../../../core/boot/grub-cfg.ts';
import { grubenvGet, grubenvSet, grubenvUnset, type Grubenv } from '../../../core/boot/grubenv.ts';
import { slotEntryId } from '../../../core/boot/slot-entry.ts';
import { ErrorCode, MoltError } from '../../../core/errors.ts';
import type { SlotId, SlotManifest } from '../../../core/slots/slot.ts';
import type { BootEntryView, BootView } from '../../../protocol/agent.ts';
import type { Bootloader } from '../../ports/bootloader.ts';
import { checkWrittenEntry, readSlotBootEntry } from './cmdline.ts';
import {
  checkCfg,
  ensureCfg,
  grubFiles,
  readEntry,
  readEntryText,
  readEnv,
  writeEntryText,
  writeEnv,
  type GrubFiles,
} from './files.ts';

const mayBoot = (env: Grubenv, slot: SlotId): boolean =>
  grubenvGet(env, grubSlotVar(slot)) === GrubSlotOk;

/** GRUB's menu for `env` as molt wrote it: the slots that may boot, A before B. */
const menu = (env: Grubenv): GrubMenuItem[] =>
  grubMenu((name) => grubenvGet(env, name), { asGrubBoots: false });

function view(env: Grubenv): BootView {
  const items = menu(env);
  const index = grubEntryNumber(items, grubenvGet(env, 'saved_entry') ?? '');
  const committed = items[index < 0 || index >= items.length ? 0 : index]?.slot ?? null;
  const next = grubenvGet(env, 'next_entry') ?? '';
  const oneShot = items.find((i) => i.id === next)?.slot ?? null;
  const entries: BootEntryView[] = items.map(({ slot }) => ({
    slot,
    state: slot === committed ? 'committed' : slot === oneShot ? 'trial' : 'bootable',
  }));
  return { bootloader: 'grub', committed, oneShot, entries };
}

async function requireEntry(files: GrubFiles, slot: SlotId): Promise<string> {
  await checkCfg(files);
  if (!mayBoot(await readEnv(files), slot) || (await readEntry(files, slot)) === undefined) {
    throw new MoltError(ErrorCode.BootloaderInvalid, `slot ${slot} has no GRUB menu entry`, {
      hint: 'write the slot and its boot entry before arming or committing it',
    });
  }
  return slotEntryId(slot);
}

/** GRUB may no longer boot `slot`: one in-place grubenv write (with a `next_entry` naming it). */
async function dropEntry(files: GrubFiles, slot: SlotId): Promise<void> {
  let env = grubenvUnset(
    grubenvUnset(await readEnv(files), grubSlotVar(slot)),
    grubVersionVar(slot),
  );
  if (grubenvGet(env, 'next_entry') === slotEntryId(slot)) env = grubenvUnset(env, 'next_entry');
  await writeEnv(files, env);
}

export function createGrubBootloader(root: string): Bootloader {
  const files = grubFiles(root);
  return {
    async read() {
      await checkCfg(files);
      return view(await readEnv(files));
    },
    removeEntry: (slot) => dropEntry(files, slot),
    markBad: (slot) => dropEntry(files, slot),
    async writeEntry(slot: SlotId, manifest: SlotManifest) {
      const e = await readSlotBootEntry(root, slot, manifest);
      const text = renderGrubEntry(e);
      await ensureCfg(files);
      let env = await readEnv(files);
      if ((await readEntryText(files, slot)) !== text) {
        // Never replace a file GRUB may boot from: on FAT a cut rename can break it.
        if (mayBoot(env, slot)) {
          await dropEntry(files, slot);
          env = await readEnv(files);
        }
        await writeEntryText(files, slot, text);
      }
      const version = grubTitleVersion(manifest.version);
      await writeEnv(
        files,
        grubenvSet(grubenvSet(env, grubSlotVar(slot), GrubSlotOk), grubVersionVar(slot), version),
      );
    },
    async checkEntry(slot: SlotId, manifest: SlotManifest) {
      await checkCfg(files);
      const written = mayBoot(await readEnv(files), slot)
        ? await readEntry(files, slot)
        : undefined;
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
