// SPDX-License-Identifier: Apache-2.0
/**
 * The boot entry of a slot, shared by both back-ends (docs/adr/0004 §4): id `molt-<x>`, title
 * `molt <version> (slot X)`, kernel and initramfs paths on the ESP (from the manifest's
 * `esp/…` artifact paths, made ESP-relative), options `molt.slot=X root=PARTLABEL=molt-x panic=10`
 * plus the image's `cmdline` artifact. `root=` names the slot's partition by GPT name (docs/adr/0008
 * §2: two slots holding one release have the same filesystem label and UUID); the image's
 * initramfs mounts it. The lab's machines carry it too: their firmware ignores it.
 */
import { ErrorCode, MoltError } from '../errors.ts';
import { MaxCmdlineBytes } from '../slots/contract.ts';
import { slotDir, type SlotId, type SlotManifest } from '../slots/slot.ts';

export interface SlotBootEntry {
  readonly slot: SlotId;
  readonly id: string;
  readonly title: string;
  readonly linux: string;
  readonly initrd?: string;
  readonly options: string;
  /** sd-boot `version`: the manifest's generation. */
  readonly version: string;
}

/** Kernel arguments both bootloaders pass through verbatim (no quotes, `$`, `;`, `\`, `#`, braces). */
const WORDS = /^[A-Za-z0-9._,:=/+@%-]+( [A-Za-z0-9._,:=/+@%-]+)*$/;

/** `molt-a` / `molt-b`. */
export function slotEntryId(slot: SlotId): string {
  return `molt-${slotDir(slot)}`;
}

/** GPT partition name of a slot (docs/real-machines.md §1): `molt-a` / `molt-b`. */
export function slotPartLabel(slot: SlotId): string {
  return `molt-${slotDir(slot)}`;
}

/** The slot an entry id names, if it is one of molt's. */
export function slotOfEntryId(id: string): SlotId | undefined {
  if (id === 'molt-a') return 'A';
  if (id === 'molt-b') return 'B';
  return undefined;
}

function espPath(slot: SlotId, path: string | undefined, what: string): string {
  if (path === undefined || !path.startsWith('esp/') || path.includes('..')) {
    throw new MoltError(
      ErrorCode.BootloaderInvalid,
      `slot ${slot}: the ${what} is not on the ESP (${String(path)})`,
      {
        hint: 'kernel and initramfs must be written under esp/ (Boot Loader Spec paths are ESP-relative)',
      },
    );
  }
  return path.slice('esp'.length);
}

/** The entry for `slot` from its manifest; `cmdline` is the content of its `cmdline` artifact. */
export function slotBootEntry(slot: SlotId, manifest: SlotManifest, cmdline = ''): SlotBootEntry {
  const extra = cmdline
    .trim()
    .split(/\s+/)
    .filter((w) => w !== '')
    .join(' ');
  if (extra !== '' && !WORDS.test(extra)) {
    throw new MoltError(
      ErrorCode.ImageInvalid,
      `slot ${slot}: the image's cmdline ${JSON.stringify(extra)} has characters molt does not pass to a bootloader`,
      {
        hint: 'kernel arguments may use letters, digits and . _ , : = / + @ % -',
      },
    );
  }
  const initrd = manifest.artifacts['initrd.img'];
  const options = [`molt.slot=${slot}`, `root=PARTLABEL=${slotPartLabel(slot)}`, 'panic=10', extra]
    .filter((w) => w !== '')
    .join(' ');
  if (options.length > MaxCmdlineBytes)
    throw new MoltError(
      ErrorCode.ImageInvalid,
      `slot ${slot}: with the image's cmdline the kernel command line is ${options.length} bytes, over the ${MaxCmdlineBytes}-byte limit`,
      { hint: 'keep the kernel arguments of the cmdline artifact short' },
    );
  const entry = {
    slot,
    id: slotEntryId(slot),
    title: `molt ${manifest.version} (slot ${slot})`.replace(/[\n\r\0]/g, ' '),
    linux: espPath(slot, manifest.artifacts.vmlinuz?.path, 'kernel'),
    options,
    version: String(manifest.generation),
  };
  return initrd === undefined
    ? entry
    : { ...entry, initrd: espPath(slot, initrd.path, 'initramfs') };
}

/** What a back-end reads back of a slot's entry: the parts that decide what boots. */
export interface WrittenBootEntry {
  readonly linux?: string | undefined;
  readonly initrd?: string | undefined;
  readonly options: string;
}

/**
 * Why the written entry would not boot what `expected` boots (kernel, initramfs, options), or
 * undefined when it would. Title and `version` are left out: they change no boot, and sd-boot's
 * `version` is raised by arming and committing.
 */
export function bootEntryMismatch(
  expected: SlotBootEntry,
  written: WrittenBootEntry,
): string | undefined {
  const fields = [
    ['kernel', expected.linux, written.linux],
    ['initramfs', expected.initrd, written.initrd],
    ['options', expected.options, written.options],
  ] as const;
  for (const [what, want, got] of fields)
    if ((want ?? '') !== (got ?? ''))
      return `its ${what} is ${JSON.stringify(got ?? '')}, not ${JSON.stringify(want ?? '')}`;
  return undefined;
}
