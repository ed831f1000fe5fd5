// SPDX-License-Identifier: Apache-2.0
/**
 * Sizes as people type them (`16M`, `256MiB`, `1G`, `1.5GiB`, `4096`), always binary: a disk
 * layout in MiB is what sfdisk, mkfs and the contract speak, and `1G` meaning 10⁹ bytes would
 * leave a slot 7 % short of what its author thought.
 */
import { ErrorCode, MoltError } from '../errors.ts';

const units: Readonly<Record<string, number>> = {
  '': 1,
  b: 1,
  k: 1024,
  kib: 1024,
  m: 1024 ** 2,
  mib: 1024 ** 2,
  g: 1024 ** 3,
  gib: 1024 ** 3,
  t: 1024 ** 4,
  tib: 1024 ** 4,
};

/** Bytes of `text`; `flag` names it in the error (`--slot-size`). */
export function parseSize(text: string, flag: string): number {
  const match = /^\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*$/.exec(text);
  const factor = match === null ? undefined : units[(match[2] ?? '').toLowerCase()];
  const bytes = match === null || factor === undefined ? NaN : Number(match[1]) * factor;
  if (!Number.isSafeInteger(bytes) || bytes <= 0)
    throw new MoltError(ErrorCode.BadFlag, `${flag} ${JSON.stringify(text)} is not a size`, {
      hint: 'a positive size in bytes or with a binary suffix: 16M, 256MiB, 1G, 2GiB',
    });
  return bytes;
}

/** `1.5 GiB`, `16 MiB`, `512 bytes`: the largest unit that gives at most one decimal. */
export function formatSize(bytes: number): string {
  for (const [unit, factor] of [
    ['TiB', 1024 ** 4],
    ['GiB', 1024 ** 3],
    ['MiB', 1024 ** 2],
    ['KiB', 1024],
  ] as const) {
    if (bytes >= factor) {
      const value = Math.round((bytes / factor) * 10) / 10;
      return `${String(value)} ${unit}`;
    }
  }
  return `${String(bytes)} bytes`;
}
