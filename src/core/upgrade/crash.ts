// SPDX-License-Identifier: Apache-2.0
/**
 * Why a trial boot never reached the agent, from the kernel's last words: the log a panicking
 * kernel left in the platform's persistent store (pstore, an EFI variable on UEFI machines), read
 * by the agent of the boot after it. Only a log that ends in a panic counts — an earlier oops
 * that did not stop its boot says nothing about the trial. A root that failed dm-verity is its own
 * code: the release's bytes on disk are not the ones it was built with.
 */
import { ErrorCode } from '../errors.ts';

/** Longest kernel line quoted in a reason: a reason is read in a table, not a log viewer. */
const MaxQuoted = 200;

const PANIC = /Kernel panic - not syncing: ?(.*)$/m;
/**
 * The line dm-verity logs for a block whose hash does not match (`254:0: data block 0 is
 * corrupted`). Every verified boot logs other verity lines too (which sha256 it uses): only this
 * one, or the panic it causes, says the root was refused.
 */
const CORRUPTED = /device-mapper: verity: ?(.*corrupted.*)$/gm;

const quoted = (line: string): string => {
  const t = line.trim();
  return t.length > MaxQuoted ? `${t.slice(0, MaxQuoted)}…` : t;
};

/** The failure a kernel log explains, or undefined when it holds no panic. */
export function crashFailure(
  log: string | undefined,
  target: string,
  fellBackTo: string,
): { code: string; message: string } | undefined {
  if (log === undefined) return undefined;
  const panic = PANIC.exec(log)?.[1];
  if (panic === undefined) return undefined;
  const back = `the bootloader fell back to slot ${fellBackTo}`;
  const corrupted = [...log.matchAll(CORRUPTED)].map((m) => m[1] ?? '');
  const verity = corrupted.at(-1) ?? (/dm-verity/.test(panic) ? panic : undefined);
  if (verity !== undefined)
    return {
      code: ErrorCode.VerityFailed,
      message: `slot ${target} did not boot: its root does not match the release's root hash (dm-verity: ${quoted(verity)}); ${back}`,
    };
  return {
    code: ErrorCode.BootFailed,
    message: `slot ${target} did not boot: the kernel panicked (${quoted(panic)}); ${back}`,
  };
}
