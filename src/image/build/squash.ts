// SPDX-License-Identifier: Apache-2.0
/**
 * The root tree as a squashfs image, the slot's read-only root. Every timestamp is the base's
 * creation time, so the same inputs squash to the same bytes (two slots holding one release are
 * byte-identical, and the agent's read-back compares digests).
 */
import type { Compression } from './options.ts';
import { runTool, type RunOptions } from './tools.ts';

/** Compressor options (options.ts and docs/image.md: sizes and times measured). */
export function compressorArgs(c: Compression): string[] {
  return c.kind === 'zstd'
    ? ['-comp', 'zstd', '-Xcompression-level', String(c.level)]
    : ['-comp', 'xz', '-Xbcj', 'x86'];
}

export async function squash(
  tree: string,
  image: string,
  o: { compression: Compression; epoch: number; log: RunOptions },
): Promise<void> {
  await runTool(
    'mksquashfs',
    [
      tree,
      image,
      '-noappend',
      '-no-progress',
      '-quiet',
      ...compressorArgs(o.compression),
      '-mkfs-time',
      String(o.epoch),
      '-all-time',
      String(o.epoch),
    ],
    { ...o.log, step: 'squashfs (mksquashfs)' },
  );
}
