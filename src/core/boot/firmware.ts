// SPDX-License-Identifier: Apache-2.0
/**
 * "What would the firmware boot": pure models of GRUB 2.06 running molt's grub.cfg, and of
 * systemd-boot 252 (in `sdboot-firmware.ts`), including the writes each makes at boot. The lab
 * firmware (src/lab/firmware) applies them to a machine root; the QEMU suite checks the real
 * bootloaders agree.
 *
 * GRUB, per boot (Debian `00_header` + normal/menu.c, with molt's grub.cfg in grub-cfg.ts):
 * 1. `load_env` (a missing, empty or invalid block loads nothing, and nothing is saved);
 * 2. `next_entry` non-empty → default = it, and `save_env next_entry` rewrites it as `next_entry=`
 *    **in place** (same bytes length, envblk.c semantics), else default = `saved_entry`;
 * 3. a non-empty `prev_saved_entry` is moved into `saved_entry` (both saved);
 * 4. the menu: slot A's entry, then B's, each only while grubenv says `molt_<x>=ok` (both when
 *    neither variable is set: a lost grubenv); `fallback` is the number of `saved_entry`'s entry;
 * 5. default → entry number (number, title or id; no match → entry 0);
 * 6. an entry whose entry file, kernel or initrd is missing or unreadable fails to load and GRUB
 *    tries `fallback`; if that fails too, nothing boots.
 */
import { isMoltError } from '../errors.ts';
import {
  checkGrubCfg,
  grubEntryNumber,
  grubEntryPath,
  grubMenu,
  parseGrubEntry,
  type GrubMenuEntry,
  type GrubMenuItem,
} from './grub-cfg.ts';
import {
  encodeGrubenv,
  grubenvEntries,
  grubenvSet,
  parseGrubenv,
  type Grubenv,
} from './grubenv.ts';

export { compareSdBootEntries, sdBoot, sdBootGlob, sdBootMenu } from './sdboot-firmware.ts';
export type { EntryFile, SdBootChoice, SdBootMenuEntry } from './sdboot-firmware.ts';

export interface GrubBootChoice {
  /** `--id` of the entry GRUB boots; undefined when nothing boots (GRUB stops at its menu). */
  readonly entryId: string | undefined;
  readonly entry?: GrubMenuEntry;
  /** What the kernel sees in /proc/cmdline: `BOOT_IMAGE=<kernel> <options>` (GRUB's linux loader). */
  readonly cmdline: string;
  /** The block after GRUB's own `save_env`s, same length as read; undefined when there is no valid block. */
  readonly newGrubenv: Uint8Array | undefined;
  readonly grubenvChanged: boolean;
  /** The default entry failed to load and `fallback` booted. */
  readonly fellBack: boolean;
  /** `boot_once` was set (a `next_entry` or `prev_saved_entry` was consumed). */
  readonly bootOnce: boolean;
  /** GRUB's error messages on the way (invalid block, `save_env` failure, missing kernel). */
  readonly errors: readonly string[];
}

interface EnvState {
  env: Grubenv | undefined;
  vars: Map<string, string>;
  errors: string[];
}

function loadEnv(bytes: Uint8Array | undefined, errors: string[]): EnvState {
  if (bytes === undefined || bytes.length === 0) return { env: undefined, vars: new Map(), errors };
  try {
    const env = parseGrubenv(bytes, { anySize: true });
    return { env, vars: new Map(grubenvEntries(env)), errors };
  } catch (error) {
    if (!isMoltError(error)) throw error;
    errors.push(error.message);
    return { env: undefined, vars: new Map(), errors };
  }
}

/** `set name=value` + `save_env name`. */
function saveEnv(state: EnvState, name: string, value: string): void {
  state.vars.set(name, value);
  if (state.env === undefined) return;
  try {
    state.env = grubenvSet(state.env, name, value);
  } catch (error) {
    if (!isMoltError(error)) throw error;
    state.errors.push(`save_env ${name}: ${error.message}`);
  }
}

/** What GRUB sees of the ESP: whether a file exists, and a text file's content. */
export interface GrubEsp {
  exists(path: string): boolean;
  read(path: string): string | undefined;
}

const emptyEsp: GrubEsp = { exists: () => false, read: () => undefined };

type MenuItem = GrubMenuItem;

/** Step 4: the menu entries grub.cfg defines for these variables (all when none may boot). */
const menu = (vars: ReadonlyMap<string, string>): MenuItem[] =>
  grubMenu((name) => vars.get(name), { asGrubBoots: true });

/** Run a menu entry: source its entry file, then load kernel and initrd; the entry, or an error. */
function load(item: MenuItem, esp: GrubEsp): GrubMenuEntry | string {
  const path = grubEntryPath(item.slot);
  const text = esp.read(path);
  if (text === undefined) return `entry ${item.id}: file ${path} not found`;
  let entry: GrubMenuEntry;
  try {
    entry = parseGrubEntry(item.id, text);
  } catch (error) {
    if (!isMoltError(error)) throw error;
    return `entry ${item.id}: ${error.message}`;
  }
  if (!esp.exists(entry.linux) || (entry.initrd !== undefined && !esp.exists(entry.initrd)))
    return `entry ${item.id}: file ${entry.linux} or its initrd not found`;
  return entry;
}

/** Steps 1–3: load the block, consume `next_entry` / `prev_saved_entry`; returns the default. */
function applyHeader(state: EnvState): { defaultValue: string; bootOnce: boolean } {
  const next = state.vars.get('next_entry') ?? '';
  let bootOnce = next !== '';
  if (bootOnce) saveEnv(state, 'next_entry', '');
  const defaultValue = bootOnce ? next : (state.vars.get('saved_entry') ?? '');
  const prev = state.vars.get('prev_saved_entry') ?? '';
  if (prev !== '') {
    saveEnv(state, 'saved_entry', prev);
    saveEnv(state, 'prev_saved_entry', '');
    bootOnce = true;
  }
  return { defaultValue, bootOnce };
}

/** Steps 4–6: the entry that loads, and whether it is the fallback. */
function pickEntry(
  state: EnvState,
  defaultValue: string,
  esp: GrubEsp,
): { entry?: GrubMenuEntry; fellBack: boolean } {
  const items = menu(state.vars);
  let index = grubEntryNumber(items, defaultValue);
  if (index < 0 || index >= items.length) index = 0;
  const first = items[index];
  if (first === undefined) return { fellBack: false };
  const loaded = load(first, esp);
  if (typeof loaded !== 'string') return { entry: loaded, fellBack: false };
  state.errors.push(loaded);
  const savedIndex = items.findIndex((i) => i.id === (state.vars.get('saved_entry') ?? ''));
  const second = savedIndex < 0 ? undefined : items[savedIndex];
  const fallback = second === undefined ? 'no fallback entry' : load(second, esp);
  if (typeof fallback !== 'string') return { entry: fallback, fellBack: true };
  if (second !== undefined) state.errors.push(fallback);
  state.errors.push('failed to boot both default and fallback entries');
  return { fellBack: false };
}

/**
 * What GRUB boots from `grubenv` (bytes, or undefined when the file is missing), `grub.cfg`
 * (which must be molt's) and the files on the ESP.
 */
export function grubBoot(
  grubenv: Uint8Array | undefined,
  cfgText: string,
  esp: GrubEsp = emptyEsp,
): GrubBootChoice {
  checkGrubCfg(cfgText);
  const state = loadEnv(grubenv, []);
  const before = state.env?.block;
  const { defaultValue, bootOnce } = applyHeader(state);
  const { entry, fellBack } = pickEntry(state, defaultValue, esp);
  const common = {
    newGrubenv: state.env === undefined ? undefined : encodeGrubenv(state.env),
    grubenvChanged: state.env !== undefined && state.env.block !== before,
    fellBack,
    bootOnce,
    errors: state.errors,
  };
  if (entry === undefined) return { ...common, entryId: undefined, cmdline: '' };
  return {
    ...common,
    entryId: entry.id,
    entry,
    cmdline: `BOOT_IMAGE=${entry.linux} ${entry.options}`.trimEnd(),
  };
}
