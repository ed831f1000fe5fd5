// SPDX-License-Identifier: Apache-2.0
/**
 * What systemd-boot 252 boots from `loader/entries/*.conf` + `loader/loader.conf`, and the one
 * write it makes (the boot-counter rename), as a pure function (src/boot/efi/boot.c):
 * - an entry whose `linux`/`efi` file does not exist is not listed;
 * - the id is the file name, lower-cased, counter included (`molt-b+1.conf`);
 * - order (`config_entry_compare`): entries with 0 tries left last; then entries with a
 *   `sort-key` before those without; with sort keys on both: `sort-key` ascending, `machine-id`,
 *   `version` descending (strverscmp); then id descending; then more tries left, fewer tries done;
 * - the default is the first entry (in that order) whose id matches loader.conf's `default` glob,
 *   else the first entry (EFI variables such as LoaderEntryOneShot are out of scope: none in the lab);
 * - booting a counting entry renames it `+L-D` → `+(L-1)-(D+1)` first (`+0-D` → `+0-(D+1)`).
 * Without `sort-key`, `version` is ignored and `molt-b` always sorts before `molt-a` — which is why
 * molt writes `sort-key molt` on every entry.
 */
import {
  nextTryFileName,
  parseBlsEntry,
  parseBlsFileName,
  parseLoaderConf,
  type BlsEntry,
} from './bls.ts';
import { strverscmpImproved } from './verscmp.ts';

export interface EntryFile {
  readonly fileName: string;
  readonly body: string;
}

export interface SdBootChoice {
  /** File name of the booted entry, undefined when no entry is bootable. */
  readonly chosen: string | undefined;
  readonly entry?: BlsEntry;
  /** The counter rename sd-boot makes before booting a counting entry. */
  readonly rename?: { readonly from: string; readonly to: string };
  /** Kernel command line: the entry's `options`. */
  readonly cmdline: string;
  /** The chosen entry had no tries left (nothing else matched `default`). */
  readonly exhausted: boolean;
}

/** One entry as sd-boot lists it. */
export interface SdBootMenuEntry {
  readonly fileName: string;
  readonly id: string;
  readonly entry: BlsEntry;
  readonly triesLeft: number | undefined;
  readonly triesDone: number | undefined;
}

const cmp = (a: number, b: number): number => (a < b ? -1 : a > b ? 1 : 0);
const strcmp = (a: string | undefined, b: string | undefined): number =>
  a === b ? 0 : a === undefined ? -1 : b === undefined ? 1 : a < b ? -1 : 1;

function compareKeyed(a: SdBootMenuEntry, b: SdBootMenuEntry): number {
  if (a.entry.sortKey === undefined || b.entry.sortKey === undefined) return 0;
  return (
    strcmp(a.entry.sortKey, b.entry.sortKey) ||
    strcmp(a.entry.machineId, b.entry.machineId) ||
    -strverscmpImproved(a.entry.version ?? '', b.entry.version ?? '')
  );
}

/** sd-boot 252 `config_entry_compare`. */
export function compareSdBootEntries(a: SdBootMenuEntry, b: SdBootMenuEntry): number {
  const r =
    cmp(Number(a.triesLeft === 0), Number(b.triesLeft === 0)) ||
    cmp(Number(a.entry.sortKey === undefined), Number(b.entry.sortKey === undefined)) ||
    compareKeyed(a, b) ||
    -strverscmpImproved(a.id, b.id);
  if (r !== 0 || a.triesLeft === undefined || b.triesLeft === undefined) return r;
  return -cmp(a.triesLeft, b.triesLeft) || cmp(a.triesDone ?? 0, b.triesDone ?? 0);
}

/** One pattern position: a literal, `?`, `*`, or a `[…]` class (with `a-z` ranges). */
type GlobToken =
  string | { readonly any: true } | { readonly star: true } | { readonly set: string };

/** The tokens of a case-folded pattern; undefined when a `[` is never closed (matches nothing). */
function globTokens(pattern: string): GlobToken[] | undefined {
  const chars = Array.from(pattern.toLowerCase());
  const tokens: GlobToken[] = [];
  for (let i = 0; i < chars.length; i++) {
    const c = chars[i] ?? '';
    if (c === '*') tokens.push({ star: true });
    else if (c === '?') tokens.push({ any: true });
    else if (c !== '[') tokens.push(c);
    else {
      const close = chars.indexOf(']', i + 1);
      if (close < 0) return undefined;
      tokens.push({ set: chars.slice(i + 1, close).join('') });
      i = close;
    }
  }
  return tokens;
}

function inSet(set: string, c: string): boolean {
  const chars = Array.from(set);
  return chars.some((first, i) =>
    chars[i + 1] === '-' && i + 2 < chars.length
      ? first <= c && c <= (chars[i + 2] ?? '')
      : first === c,
  );
}

const isStar = (t: GlobToken | undefined): boolean => typeof t === 'object' && 'star' in t;

function matchesOne(t: GlobToken, c: string): boolean {
  if (typeof t === 'string') return t === c;
  return 'any' in t || ('set' in t && inSet(t.set, c));
}

/**
 * EFI `efi_fnmatch` subset: `*`, `?`, `[…]`; ids and patterns are case-folded. Matched by the
 * two-pointer wildcard walk (back to the last `*` only), O(pattern × id) at worst: a translated
 * regex backtracks exponentially in the number of stars, and a loader.conf `default` of eight
 * `*a` took the lab firmware 56 s per entry (found by boot.fuzz.test.ts).
 */
export function sdBootGlob(pattern: string, id: string): boolean {
  const p = globTokens(pattern);
  if (p === undefined) return false;
  const s = Array.from(id.toLowerCase());
  let [pi, si, star, resume] = [0, 0, -1, 0];
  while (si < s.length) {
    const t = p[pi];
    if (isStar(t)) [star, resume, pi] = [pi, si, pi + 1];
    else if (t !== undefined && matchesOne(t, s[si] ?? '')) [pi, si] = [pi + 1, si + 1];
    else if (star < 0) return false;
    else [pi, si, resume] = [star + 1, resume + 1, resume + 1];
  }
  while (isStar(p[pi])) pi++;
  return pi === p.length;
}

/** The entries sd-boot lists, in its menu order. */
export function sdBootMenu(
  files: readonly EntryFile[],
  exists: (path: string) => boolean = () => true,
): SdBootMenuEntry[] {
  const listed: SdBootMenuEntry[] = [];
  for (const file of files) {
    const name = parseBlsFileName(file.fileName);
    if (name === undefined) continue;
    const entry = parseBlsEntry(file.body);
    const loader = entry.linux ?? entry.efi;
    if (loader === undefined || !exists(loader)) continue;
    listed.push({
      fileName: file.fileName,
      id: file.fileName.toLowerCase(),
      entry,
      triesLeft: name.triesLeft,
      triesDone: name.triesDone,
    });
  }
  return listed.sort(compareSdBootEntries);
}

/** What sd-boot 252 boots, and the rename it makes first. */
export function sdBoot(
  files: readonly EntryFile[],
  loaderConf: string,
  exists?: (path: string) => boolean,
): SdBootChoice {
  const menu = sdBootMenu(files, exists);
  const pattern = parseLoaderConf(loaderConf).default;
  const chosen =
    (pattern === undefined ? undefined : menu.find((e) => sdBootGlob(pattern, e.id))) ?? menu[0];
  if (chosen === undefined) return { chosen: undefined, cmdline: '', exhausted: false };
  const id = chosen.fileName.slice(0, chosen.fileName.lastIndexOf('+'));
  const to =
    chosen.triesLeft === undefined
      ? undefined
      : nextTryFileName({ id, triesLeft: chosen.triesLeft, triesDone: chosen.triesDone ?? 0 });
  const base = {
    chosen: chosen.fileName,
    entry: chosen.entry,
    cmdline: chosen.entry.options,
    exhausted: chosen.triesLeft === 0,
  };
  return to === undefined ? base : { ...base, rename: { from: chosen.fileName, to } };
}
