// SPDX-License-Identifier: Apache-2.0
/**
 * Boot Loader Specification type #1 entries as systemd-boot 252 reads them
 * (reference/boot-formats.md §2): the file name `<id>[+<left>[-<done>]].conf` carries the boot
 * counter, the body is `key value` lines, `loader/loader.conf` holds `default` and `timeout`.
 * Cross-checked with `bootctl --json=short list` in test/integration/bootctl.test.ts.
 */
import { ErrorCode, MoltError } from '../errors.ts';

export interface BlsEntryName {
  /** The file name without counter and `.conf`, e.g. `molt-b`. */
  readonly id: string;
  /** Present only on counting entries. */
  readonly triesLeft?: number;
  readonly triesDone?: number;
}

const COUNTER = /^(\d+)(?:-(\d+))?\.conf$/;
const MAX_TRIES = 0x7fffffff;

/**
 * Split an entry file name like sd-boot's `config_entry_parse_tries`: the counter follows the
 * last `+` and must run up to `.conf`; a malformed counter is part of the id (not counting).
 * Returns undefined for names that are not entries (no `.conf`, hidden, `auto-*`).
 */
export function parseBlsFileName(fileName: string): BlsEntryName | undefined {
  if (
    !fileName.toLowerCase().endsWith('.conf') ||
    fileName.startsWith('.') ||
    fileName.startsWith('auto-')
  ) {
    return undefined;
  }
  const plus = fileName.lastIndexOf('+');
  const counter = plus < 0 ? null : COUNTER.exec(fileName.slice(plus + 1));
  const left = Number(counter?.[1]);
  const done = Number(counter?.[2] ?? 0);
  if (!counter || left > MAX_TRIES || done > MAX_TRIES)
    return { id: fileName.slice(0, -'.conf'.length) };
  return { id: fileName.slice(0, plus), triesLeft: left, triesDone: done };
}

/** `molt-b.conf`, `molt-b+1.conf`, `molt-b+0-1.conf` (`-0` is left out, as sd-boot reads it as 0). */
export function blsFileName(name: BlsEntryName): string {
  if (name.triesLeft === undefined) return `${name.id}.conf`;
  const done = name.triesDone ?? 0;
  return `${name.id}+${name.triesLeft}${done === 0 ? '' : `-${done}`}.conf`;
}

/** The name sd-boot renames a counting entry to before booting it: `+L-D` → `+(L-1)-(D+1)`, floor 0. */
export function nextTryFileName(name: BlsEntryName): string | undefined {
  if (name.triesLeft === undefined) return undefined;
  const left = Math.max(name.triesLeft - 1, 0);
  const done = Math.min((name.triesDone ?? 0) + 1, MAX_TRIES);
  return `${name.id}+${left}-${done}.conf`;
}

export interface BlsEntry {
  readonly title?: string;
  readonly version?: string;
  readonly sortKey?: string;
  readonly machineId?: string;
  readonly linux?: string;
  readonly efi?: string;
  readonly initrd: readonly string[];
  /** All `options` lines joined by a space, as sd-boot does. */
  readonly options: string;
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] };
const SINGLE_KEYS = {
  title: 'title',
  version: 'version',
  'sort-key': 'sortKey',
  'machine-id': 'machineId',
  linux: 'linux',
  efi: 'efi',
} as const;

/** sd-boot's `line_get_key_value`: `key value` per line, `#` comments, one pair of quotes stripped. */
function keyValue(line: string): [string, string] | undefined {
  const text = line.trim();
  if (text === '' || text.startsWith('#')) return undefined;
  const match = /^(\S+)[ \t]*(.*)$/.exec(text);
  if (!match) return undefined;
  let value = (match[2] ?? '').trim();
  if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) value = value.slice(1, -1);
  return [match[1] ?? '', value];
}

/** Read an entry body (unknown keys ignored; the last `title`, `linux`, … wins, as in sd-boot). */
export function parseBlsEntry(body: string): BlsEntry {
  const entry: Mutable<BlsEntry> & { initrd: string[] } = { initrd: [], options: '' };
  for (const line of body.split('\n')) {
    const kv = keyValue(line);
    if (kv === undefined) continue;
    const [key, value] = kv;
    if (key === 'initrd') entry.initrd.push(value);
    else if (key === 'options')
      entry.options = entry.options === '' ? value : `${entry.options} ${value}`;
    else if (key in SINGLE_KEYS) entry[SINGLE_KEYS[key as keyof typeof SINGLE_KEYS]] = value;
  }
  return entry;
}

export interface BlsEntryInput {
  readonly title: string;
  readonly version: string;
  readonly sortKey: string;
  readonly linux: string;
  readonly initrd?: string;
  readonly options: string;
}

/** An entry body, one key per line in the spec's order. */
export function renderBlsEntry(e: BlsEntryInput): string {
  for (const value of [e.title, e.version, e.sortKey, e.linux, e.initrd ?? '', e.options]) {
    if (/[\n\r\0]/.test(value)) {
      throw new MoltError(
        ErrorCode.BootloaderInvalid,
        `boot entry value ${JSON.stringify(value)} spans lines`,
      );
    }
  }
  const initrd = e.initrd === undefined ? '' : `initrd ${e.initrd}\n`;
  return `title ${e.title}\nversion ${e.version}\nsort-key ${e.sortKey}\nlinux ${e.linux}\n${initrd}options ${e.options}\n`;
}

/** molt's `loader/loader.conf`: both slots match `default` (reference §2.3's pitfall), no menu. */
export function renderLoaderConf(pattern = 'molt-*'): string {
  return `default ${pattern}\ntimeout 0\n`;
}

/** The `default` glob and `timeout` of a loader.conf (other keys ignored). */
export function parseLoaderConf(text: string): {
  readonly default?: string;
  readonly timeout?: string;
} {
  const out: { default?: string; timeout?: string } = {};
  for (const line of text.split('\n')) {
    const kv = keyValue(line);
    if (kv?.[0] === 'default') out.default = kv[1];
    if (kv?.[0] === 'timeout') out.timeout = kv[1];
  }
  return out;
}
