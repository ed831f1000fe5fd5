// SPDX-License-Identifier: Apache-2.0
/**
 * molt's grub.cfg (docs/adr/0004 §4): Debian's `00_header` boot-once logic verbatim (load_env;
 * `next_entry` → default once, consumed with `save_env`; else `saved_entry`), a `fallback` to the
 * committed entry, and one `menuentry … --id molt-<x>` per bootable slot. GRUB finds grubenv at
 * `$prefix/grubenv`, so its prefix must be the ESP's `/grub` (as `grub-install` sets it).
 *
 * GRUB 2.06 (Debian 2.06-13) reads `fallback` as entry *numbers* only: `set fallback=molt-a` is
 * ignored ("Failed to boot both default and fallback entries", verified in QEMU). The committed
 * entry's number is therefore chosen at boot from `saved_entry` by one `if` per entry.
 *
 * The parser reads back only this subset; anything else is `MOLT_BOOTLOADER_INVALID`.
 */
import { ErrorCode, MoltError } from '../errors.ts';

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

export interface GrubConfig {
  readonly entries: readonly GrubMenuEntry[];
  /** `saved_entry` value → the entry number `fallback` is set to. */
  readonly fallback: ReadonlyMap<string, number>;
}

export const GrubCfgHeader = `# Written by molt (docs/adr/0004 §4); rewritten when the set of boot entries changes.
# Boot-once and commit live in grubenv (next_entry, saved_entry): Debian's 00_header logic.
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
`;

const ID = /^[a-z0-9][a-z0-9._-]*$/;
const PATH = /^\/[A-Za-z0-9._/-]+$/;
/** Words GRUB's script parser passes through unchanged: no quotes, `$`, `;`, braces, `#`, `\`. */
const OPTIONS = /^[A-Za-z0-9._,:=/+@%-]+( [A-Za-z0-9._,:=/+@%-]+)*$/;

function invalid(message: string): MoltError {
  return new MoltError(ErrorCode.BootloaderInvalid, message, {
    hint: 'grub.cfg is written by molt; remove the file to let molt rewrite it',
  });
}

function quoteTitle(title: string): string {
  return `'${title.replaceAll("'", `'\\''`)}'`;
}

function checkEntry(e: GrubMenuEntry): void {
  if (!ID.test(e.id)) throw invalid(`grub entry id ${JSON.stringify(e.id)} is not a plain id`);
  if (!PATH.test(e.linux) || (e.initrd !== undefined && !PATH.test(e.initrd))) {
    throw invalid(`grub entry ${e.id}: kernel and initrd paths must be plain absolute ESP paths`);
  }
  if (!OPTIONS.test(e.options)) {
    throw invalid(
      `grub entry ${e.id}: kernel options ${JSON.stringify(e.options)} use characters GRUB would interpret`,
    );
  }
  if (/[\n\0]/.test(e.title)) throw invalid(`grub entry ${e.id}: the title has a newline or NUL`);
}

/** The whole grub.cfg for `entries` (menu order = array order). */
export function renderGrubCfg(entries: readonly GrubMenuEntry[]): string {
  entries.forEach(checkEntry);
  const fallback = entries.map(
    (e, i) => `if [ "\${saved_entry}" = "${e.id}" ]; then set fallback=${i}; fi\n`,
  );
  const menu = entries.map((e) => {
    const initrd = e.initrd === undefined ? '' : `\tinitrd ${e.initrd}\n`;
    return `\nmenuentry ${quoteTitle(e.title)} --id ${e.id} {\n\tlinux ${e.linux} ${e.options}\n${initrd}}\n`;
  });
  return `${GrubCfgHeader}\n${fallback.join('')}${menu.join('')}`;
}

const FALLBACK_LINE = /^if \[ "\$\{saved_entry\}" = "([^"]+)" \]; then set fallback=(\d+); fi$/;
const ENTRY_LINE = /^menuentry '((?:[^']|'\\'')*)' --id (\S+) \{$/;

interface Draft {
  id: string;
  title: string;
  linux?: string;
  options?: string;
  initrd?: string;
}

function bodyLine(draft: Draft, line: string, n: number): void {
  const [cmd, path, ...rest] = line.trim().split(' ');
  if (cmd === 'linux' && path !== undefined && draft.linux === undefined) {
    draft.linux = path;
    draft.options = rest.join(' ');
  } else if (
    cmd === 'initrd' &&
    path !== undefined &&
    rest.length === 0 &&
    draft.initrd === undefined
  ) {
    draft.initrd = path;
  } else {
    throw invalid(`grub.cfg line ${n}: unexpected ${JSON.stringify(line)} in entry ${draft.id}`);
  }
}

function finish(draft: Draft, n: number): GrubMenuEntry {
  if (draft.linux === undefined)
    throw invalid(`grub.cfg line ${n}: entry ${draft.id} has no linux line`);
  const entry = {
    id: draft.id,
    title: draft.title,
    linux: draft.linux,
    options: draft.options ?? '',
  };
  return draft.initrd === undefined ? entry : { ...entry, initrd: draft.initrd };
}

/** Read back a grub.cfg molt wrote. */
export function parseGrubCfg(text: string): GrubConfig {
  if (!text.startsWith(GrubCfgHeader))
    throw invalid('grub.cfg was not written by molt (its header differs)');
  const entries: GrubMenuEntry[] = [];
  const fallback = new Map<string, number>();
  let draft: Draft | undefined;
  const headerLines = GrubCfgHeader.split('\n').length - 1;
  text
    .slice(GrubCfgHeader.length)
    .split('\n')
    .forEach((line, i) => {
      const n = headerLines + i + 1;
      const fb = FALLBACK_LINE.exec(line);
      const head = ENTRY_LINE.exec(line);
      if (draft !== undefined) {
        if (line === '}') entries.push(finish(draft, n));
        else bodyLine(draft, line, n);
        if (line === '}') draft = undefined;
      } else if (fb) fallback.set(fb[1] ?? '', Number(fb[2]));
      else if (head) draft = { id: head[2] ?? '', title: (head[1] ?? '').replaceAll(`'\\''`, "'") };
      else if (line.trim() !== '' && !line.startsWith('#'))
        throw invalid(`grub.cfg line ${n}: unexpected ${JSON.stringify(line)}`);
    });
  if (draft !== undefined) throw invalid(`grub.cfg: entry ${draft.id} is not closed`);
  return { entries, fallback };
}

/**
 * GRUB's `get_entry_number` (normal/menu.c) for `default`: a number is an entry index, anything
 * else is matched against titles and ids; returns -1 when nothing matches (GRUB then boots 0).
 */
export function grubEntryNumber(entries: readonly GrubMenuEntry[], value: string): number {
  const number = /^\s*(\d+)/.exec(value);
  if (number) return Number(number[1]);
  return entries.findIndex((e) => e.title === value || e.id === value);
}
