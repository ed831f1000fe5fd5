// SPDX-License-Identifier: Apache-2.0
/**
 * "What would the firmware boot": pure models of GRUB 2.06 running molt's grub.cfg, and of
 * systemd-boot 252 (in `sdboot-firmware.ts`), including the writes each makes at boot. The lab
 * firmware (src/lab/firmware) applies them to a machine root; the QEMU suite checks the real
 * bootloaders agree.
 *
 * GRUB, per boot (Debian `00_header` + normal/menu.c):
 * 1. `load_env` (a missing, empty or invalid block loads nothing, and nothing is saved);
 * 2. `next_entry` non-empty → default = it, and `save_env next_entry` rewrites it as `next_entry=`
 *    **in place** (same bytes length, envblk.c semantics), else default = `saved_entry`;
 * 3. a non-empty `prev_saved_entry` is moved into `saved_entry` (both saved);
 * 4. default → entry number (number, title or id; no match → entry 0);
 * 5. an entry whose kernel or initrd is missing fails to load and GRUB tries `fallback` (a number,
 *    chosen by molt's grub.cfg from `saved_entry`); if that fails too, nothing boots.
 */
import { isMoltError } from '../errors.ts';
import { grubEntryNumber, parseGrubCfg, type GrubConfig, type GrubMenuEntry } from './grub-cfg.ts';
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

function loads(entry: GrubMenuEntry, exists: (path: string) => boolean): boolean {
  return exists(entry.linux) && (entry.initrd === undefined || exists(entry.initrd));
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

/** Steps 4–5: the entry that loads, and whether it is the fallback. */
function pickEntry(
  cfg: GrubConfig,
  state: EnvState,
  defaultValue: string,
  exists: (path: string) => boolean,
): { entry?: GrubMenuEntry; fellBack: boolean } {
  let index = grubEntryNumber(cfg.entries, defaultValue);
  if (index < 0 || index >= cfg.entries.length) index = 0;
  const first = cfg.entries[index];
  if (first === undefined || loads(first, exists))
    return first === undefined ? { fellBack: false } : { entry: first, fellBack: false };
  state.errors.push(`entry ${first.id}: file ${first.linux} or its initrd not found`);
  const fallbackIndex = cfg.fallback.get(state.vars.get('saved_entry') ?? '');
  const second = fallbackIndex === undefined ? undefined : cfg.entries[fallbackIndex];
  if (second !== undefined && loads(second, exists)) return { entry: second, fellBack: true };
  state.errors.push('failed to boot both default and fallback entries');
  return { fellBack: false };
}

/** What GRUB boots from `grubenv` (bytes, or undefined when the file is missing) and `grub.cfg`. */
export function grubBoot(
  grubenv: Uint8Array | undefined,
  cfgText: string,
  exists: (path: string) => boolean = () => true,
): GrubBootChoice {
  const cfg = parseGrubCfg(cfgText);
  const state = loadEnv(grubenv, []);
  const before = state.env?.block;
  const { defaultValue, bootOnce } = applyHeader(state);
  const { entry, fellBack } = pickEntry(cfg, state, defaultValue, exists);
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
