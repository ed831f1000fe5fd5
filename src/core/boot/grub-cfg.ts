// SPDX-License-Identifier: Apache-2.0
/**
 * molt's GRUB configuration (docs/adr/0004 §4, docs/adr/0008 "FAT"): three kinds of file, so that
 * no power cut can leave GRUB without a slot to boot.
 *
 * - `grub/grub.cfg` ({@link GrubCfg}) never changes after the first install. It carries Debian's
 *   `00_header` boot-once logic verbatim (load_env; `next_entry` → default once, consumed with
 *   `save_env`; else `saved_entry`), defines the menu entry of a slot only while grubenv says the
 *   slot may boot (`molt_a=ok`) — both when it names none, as with a lost or unreadable grubenv —
 *   and sets `fallback` to the committed entry's number.
 * - `grub/grubenv` holds every change of state (which slots may boot, boot-once, commit); molt
 *   rewrites its 1,024 bytes in place, as GRUB's own `save_env` does — no cluster is allocated or
 *   freed, no directory entry moves. Its few short variables fit in the first 512-byte sector and
 *   the rest is `#` padding in every version, so even a write torn between sectors leaves either
 *   the old or the new block.
 * - `molt/<x>/grub.cfg` ({@link renderGrubEntry}) holds a slot's `linux` and `initrd` lines,
 *   sourced by its menu entry. It is written only while that slot may not boot.
 *
 * Why: FAT has no journal. Replacing a file by rename is atomic on ext4, not on FAT: a power cut
 * can leave a directory entry pointing at clusters the FAT calls free, and when that file was
 * grub.cfg GRUB stopped at its prompt (found by the VM power-cut scenario, 2026-11-26).
 *
 * GRUB 2.06 (Debian 2.06-13) reads `fallback` as entry *numbers* only: `set fallback=molt-a` is
 * ignored (verified in QEMU), so the committed entry's number is chosen at boot by nested `if`s.
 */
import { ErrorCode, MoltError } from '../errors.ts';
import { slotDir, SlotIds, type SlotId } from '../slots/slot.ts';
import { slotEntryId } from './slot-entry.ts';

export interface GrubMenuEntry {
  /** `--id`, e.g. `molt-a`. */
  readonly id: string;
  readonly title: string;
  /** Kernel path on the ESP, e.g. `/molt/a/vmlinuz`. */
  readonly linux: string;
  /** Kernel command line, e.g. `molt.slot=A root=PARTLABEL=molt-a panic=10`. */
  readonly options: string;
  readonly initrd?: string;
}

/** The grubenv variable that lets a slot boot, and its value when it may. */
export function grubSlotVar(slot: SlotId): string {
  return `molt_${slotDir(slot)}`;
}
export const GrubSlotOk = 'ok';

/** ESP path of a slot's entry file, sourced by its menu entry. */
export function grubEntryPath(slot: SlotId): string {
  return `/molt/${slotDir(slot)}/grub.cfg`;
}

/** The grubenv variable holding the version a slot's menu title shows. */
export function grubVersionVar(slot: SlotId): string {
  return `molt_${slotDir(slot)}_version`;
}

/** What molt stores in {@link grubVersionVar}: the version if plain and short, else `?`. */
export function grubTitleVersion(version: string): string {
  return /^[A-Za-z0-9._+~-]{1,64}$/.test(version) ? version : '?';
}

/** A slot's menu title, as GRUB expands it: `molt 1.1.0 (slot B)`. */
export function grubMenuTitle(slot: SlotId, version: string): string {
  return `molt ${version} (slot ${slot})`;
}

/** One entry of the menu grub.cfg defines. */
export interface GrubMenuItem {
  readonly slot: SlotId;
  readonly id: string;
  readonly title: string;
}

/**
 * The menu grub.cfg defines for grubenv's variables (`get`), A before B: the slots with
 * `molt_<x>=ok`. With `asGrubBoots`, also grub.cfg's rule that a block naming neither slot (lost
 * or unreadable) offers both — what GRUB boots, not what molt wrote.
 */
export function grubMenu(
  get: (name: string) => string | undefined,
  o: { readonly asGrubBoots: boolean },
): GrubMenuItem[] {
  const none = o.asGrubBoots && SlotIds.every((slot) => (get(grubSlotVar(slot)) ?? '') === '');
  return SlotIds.filter((slot) => none || get(grubSlotVar(slot)) === GrubSlotOk).map((slot) => ({
    slot,
    id: slotEntryId(slot),
    title: grubMenuTitle(slot, get(grubVersionVar(slot)) ?? ''),
  }));
}

const menuEntry = (slot: SlotId): string => `if [ "\${${grubSlotVar(slot)}}" = ${GrubSlotOk} ]; then
  menuentry "molt \${${grubVersionVar(slot)}} (slot ${slot})" --id molt-${slotDir(slot)} {
    source ${grubEntryPath(slot)}
  }
fi
`;

/** The whole grub.cfg: written once, never rewritten (see the file comment). */
export const GrubCfg = `# Written by molt when the machine was installed, and never rewritten (docs/adr/0008).
# Which slots may boot (molt_a, molt_b = ok) and their versions, boot-once and commit
# (next_entry, saved_entry) live in grubenv; each slot's kernel line in /molt/<slot>/grub.cfg.
set timeout=0
if [ -s $prefix/grubenv ]; then
  set have_grubenv=true
  load_env
fi
if [ "\${next_entry}" ] ; then
   set default="\${next_entry}"
   set next_entry=
   save_env next_entry
   set boot_once=true
else
   set default="\${saved_entry}"
fi

if [ "\${prev_saved_entry}" ]; then
  set saved_entry="\${prev_saved_entry}"
  save_env saved_entry
  set prev_saved_entry=
  save_env prev_saved_entry
  set boot_once=true
fi

# molt always lets a slot boot: none at all means grubenv is missing or unreadable. Offer both.
if [ -z "\${molt_a}\${molt_b}" ]; then
  set molt_a=ok
  set molt_b=ok
fi

# fallback: the number of saved_entry's menu entry (A is entry 0 whenever it may boot).
if [ "\${molt_a}" = ok ]; then
  if [ "\${saved_entry}" = molt-a ]; then set fallback=0; fi
  if [ "\${molt_b}" = ok ]; then
    if [ "\${saved_entry}" = molt-b ]; then set fallback=1; fi
  fi
elif [ "\${molt_b}" = ok ]; then
  if [ "\${saved_entry}" = molt-b ]; then set fallback=0; fi
fi

${SlotIds.map(menuEntry).join('')}`;

function invalid(message: string, hint: string): MoltError {
  return new MoltError(ErrorCode.BootloaderInvalid, message, { hint });
}

const cfgHint =
  'grub.cfg is written once by molt install; restore it from a machine of the same molt version';
const entryHint = "the slot's entry file is written by molt; upgrade to write the slot again";

/** Throw `MOLT_BOOTLOADER_INVALID` unless `text` is molt's grub.cfg. */
export function checkGrubCfg(text: string): void {
  if (text !== GrubCfg) throw invalid('grub.cfg was not written by this version of molt', cfgHint);
}

const PATH = /^\/[A-Za-z0-9._/-]+$/;
/** Words GRUB's script parser passes through unchanged: no quotes, `$`, `;`, braces, `#`, `\`. */
const OPTIONS = /^[A-Za-z0-9._,:=/+@%-]+( [A-Za-z0-9._,:=/+@%-]+)*$/;

function checkEntry(e: GrubMenuEntry): void {
  if (!PATH.test(e.linux) || (e.initrd !== undefined && !PATH.test(e.initrd))) {
    throw invalid(
      `grub entry ${e.id}: kernel and initrd paths must be plain absolute ESP paths`,
      entryHint,
    );
  }
  if (!OPTIONS.test(e.options)) {
    throw invalid(
      `grub entry ${e.id}: kernel options ${JSON.stringify(e.options)} use characters GRUB would interpret`,
      entryHint,
    );
  }
  if (/[\n\r\0]/.test(e.title))
    throw invalid(`grub entry ${e.id}: the title has a newline or NUL`, entryHint);
}

/** A slot's entry file: its title as a comment, then the lines its menu entry sources. */
export function renderGrubEntry(e: GrubMenuEntry): string {
  checkEntry(e);
  const initrd = e.initrd === undefined ? '' : `initrd ${e.initrd}\n`;
  return `# ${e.title}\nlinux ${e.linux} ${e.options}\n${initrd}`;
}

const ENTRY_FILE = /^# ([^\n]*)\nlinux (\S+) ([^\n]*)\n(?:initrd (\S+)\n)?$/;

/** Read back an entry file molt wrote for the entry `id`: exactly what {@link renderGrubEntry} writes. */
export function parseGrubEntry(id: string, text: string): GrubMenuEntry {
  const m = ENTRY_FILE.exec(text);
  if (m === null)
    throw invalid(
      `the GRUB entry file of ${id} is not one molt writes (a title, a linux line, an initrd line)`,
      entryHint,
    );
  const [, title = '', linux = '', options = '', initrd] = m;
  const entry: GrubMenuEntry = {
    id,
    title,
    linux,
    options,
    ...(initrd !== undefined && { initrd }),
  };
  checkEntry(entry);
  return entry;
}

/**
 * GRUB's `get_entry_number` (normal/menu.c) for `default`: a number is an entry index, anything
 * else is matched against titles and ids; returns -1 when nothing matches (GRUB then boots 0).
 */
export function grubEntryNumber(
  entries: readonly { readonly id: string; readonly title: string }[],
  value: string,
): number {
  const number = /^\s*(\d+)/.exec(value);
  if (number) return Number(number[1]);
  return entries.findIndex((e) => e.title === value || e.id === value);
}
