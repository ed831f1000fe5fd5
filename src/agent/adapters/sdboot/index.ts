// SPDX-License-Identifier: Apache-2.0
/**
 * SdBootBootloader (docs/adr/0004 §4): Boot Loader Spec entries `esp/loader/entries/molt-<x>…conf`
 * with `sort-key molt` and `version <n>`, and `default molt-*`. sd-boot boots the first entry in
 * its order (exhausted counters last, then highest `version`), so an entry's *name* is its state:
 * - `molt-x+0.conf`   parked: written, not armed — sorts last, never chosen while another matches;
 * - `molt-x+1.conf`   armed trial: one boot attempt (sd-boot renames it `+0-1` as it boots it);
 * - `molt-x+0-N.conf` tried: the running trial, or a failed one;
 * - `molt-x.conf`     good: the first good entry in sd-boot order is the committed one.
 * Arming and committing give the entry a `version` above the others' when it is not already, so
 * a rollback to an older slot sorts first too. Remove / mark bad delete the slot's entry.
 */
import { parseBlsEntry, renderBlsEntry } from '../../../core/boot/bls.ts';
import { ErrorCode, MoltError } from '../../../core/errors.ts';
import type { SlotId, SlotManifest } from '../../../core/slots/slot.ts';
import type { BootEntryView, BootView } from '../../../protocol/agent.ts';
import type { Bootloader } from '../../ports/bootloader.ts';
import { checkWrittenEntry, readSlotBootEntry } from '../grub/cmdline.ts';
import {
  deleteEntries,
  ensureLoaderConf,
  listEntries,
  renameEntry,
  sdBootFiles,
  writeEntryFile,
  type MoltEntry,
  type SdBootFiles,
} from './files.ts';

const isTrial = (e: MoltEntry): boolean => (e.name.triesLeft ?? 0) > 0;
const isGood = (e: MoltEntry): boolean => e.name.triesLeft === undefined;

function entryView(e: MoltEntry, committed: SlotId | null): BootEntryView {
  const { triesLeft, triesDone } = e.name;
  if (triesLeft === undefined)
    return { slot: e.slot, state: e.slot === committed ? 'committed' : 'bootable' };
  const state = triesLeft > 0 ? 'trial' : (triesDone ?? 0) > 0 ? 'bad' : 'bootable';
  return { slot: e.slot, state, triesLeft, triesDone: triesDone ?? 0 };
}

function view(entries: readonly MoltEntry[]): BootView {
  const committed = entries.find(isGood)?.slot ?? null;
  const oneShot = entries.find(isTrial)?.slot ?? null;
  const seen = new Set<SlotId>();
  const list = entries
    .filter((e) => !seen.has(e.slot) && seen.add(e.slot))
    .map((e) => entryView(e, committed))
    .sort((a, b) => (a.slot < b.slot ? -1 : 1));
  return { bootloader: 'systemd-boot', committed, oneShot, entries: list };
}

async function primary(
  files: SdBootFiles,
  slot: SlotId,
): Promise<{ entry: MoltEntry; others: MoltEntry[]; extra: MoltEntry[]; committed: boolean }> {
  const entries = await listEntries(files);
  const [entry, ...extra] = entries.filter((e) => e.slot === slot);
  if (entry === undefined) {
    throw new MoltError(ErrorCode.BootloaderInvalid, `slot ${slot} has no boot loader entry`, {
      hint: 'write the slot and its boot entry before arming or committing it',
    });
  }
  return {
    entry,
    others: entries.filter((e) => e.slot !== slot),
    extra,
    committed: entries.find(isGood) === entry,
  };
}

/** Give `fileName` a `version` above every entry in `above`, unless it already sorts higher. */
async function outrank(
  files: SdBootFiles,
  entry: MoltEntry,
  fileName: string,
  above: readonly MoltEntry[],
): Promise<void> {
  const top = Math.max(0, ...above.map((e) => e.version));
  if (entry.version > top) return;
  await writeEntryFile(files, fileName, entry.body.replace(/^version .*$/m, `version ${top + 1}`));
}

/** Park every other slot's armed trial (only one boot-once at a time, as with GRUB's next_entry). */
async function parkTrials(files: SdBootFiles, entries: readonly MoltEntry[]): Promise<void> {
  for (const e of entries.filter(isTrial))
    await renameEntry(files, e, { id: e.name.id, triesLeft: 0, triesDone: e.name.triesDone ?? 0 });
}

export function createSdBootBootloader(root: string): Bootloader {
  const files = sdBootFiles(root);
  const removeSlot = async (slot: SlotId): Promise<void> => {
    await deleteEntries(
      files,
      (await listEntries(files)).filter((e) => e.slot === slot),
    );
  };
  return {
    async read() {
      return view(await listEntries(files));
    },
    removeEntry: removeSlot,
    markBad: removeSlot,
    async writeEntry(slot: SlotId, manifest: SlotManifest) {
      const e = await readSlotBootEntry(root, slot, manifest);
      const body = renderBlsEntry({ ...e, sortKey: 'molt' });
      await ensureLoaderConf(files);
      const entries = await listEntries(files);
      const [current, ...extra] = entries.filter((x) => x.slot === slot);
      const keep =
        current !== undefined &&
        (isTrial(current) || current.name.triesDone === 0 || entries.find(isGood) === current);
      const fileName = keep
        ? current.fileName
        : current === undefined
          ? `${e.id}+0.conf`
          : await renameEntry(files, current, { id: e.id, triesLeft: 0 });
      await writeEntryFile(files, fileName, body);
      await deleteEntries(files, extra);
    },
    async checkEntry(slot: SlotId, manifest: SlotManifest) {
      // The slot's first entry in sd-boot's order is the one a boot-once arms.
      const entry = (await listEntries(files)).find((e) => e.slot === slot);
      const parsed = entry === undefined ? undefined : parseBlsEntry(entry.body);
      const written =
        parsed === undefined
          ? undefined
          : { linux: parsed.linux, initrd: parsed.initrd.join(' '), options: parsed.options };
      await checkWrittenEntry(root, slot, manifest, written);
    },
    async armBootOnce(slot) {
      const { entry, others, extra, committed } = await primary(files, slot);
      await parkTrials(files, others);
      // The committed entry boots anyway; turning it into a trial would let a failed boot fall to the other slot.
      if (committed) return;
      // Rank first, under the parked name, then rename to `+1`: the entry point is written last, so
      // a power cut in between leaves an unarmed entry, never a trial that sorts below the default.
      await outrank(files, entry, entry.fileName, others);
      await renameEntry(files, entry, { id: entry.name.id, triesLeft: 1 });
      await deleteEntries(files, extra);
      await ensureLoaderConf(files);
    },
    async disarmBootOnce() {
      await parkTrials(files, await listEntries(files));
    },
    async commit(slot) {
      const { entry, others, extra } = await primary(files, slot);
      await parkTrials(files, others);
      await outrank(files, entry, entry.fileName, others.filter(isGood));
      await renameEntry(files, entry, { id: entry.name.id });
      await deleteEntries(files, extra);
      await ensureLoaderConf(files);
    },
  };
}
