// SPDX-License-Identifier: Apache-2.0
/**
 * The root filesystem's dm-verity hash tree (docs/adr/0019 §3). `veritysetup format` (Debian's
 * cryptsetup-bin) writes a verity superblock and the hash tree after the squashfs, at the next
 * 4 KiB boundary of the same file: one artifact, one partition per slot, as before, and a kernel
 * that mounts the squashfs without verity reads only its own bytes. The salt and the UUID come
 * from the data's digest, so the same inputs still build byte-equal images.
 */
import { stat, truncate } from 'node:fs/promises';
import { ErrorCode, MoltError } from '../../core/errors.ts';
import { fileDigest } from './digest.ts';
import { runTool, type RunOptions } from './tools.ts';

const BlockBytes = 4096;

/** What opening the slot through dm-verity needs besides the partition. */
export interface Verity {
  /** The hash tree's root (64 hex digits, sha256). */
  readonly rootHash: string;
  /** Where the superblock and the hash tree start: the data's bytes, 4 KiB-aligned. */
  readonly hashOffset: number;
}

/**
 * The kernel argument that makes the initramfs open the slot through dm-verity
 * (deploy/image/initramfs-tools/scripts/local-top/molt-verity): it goes into the release's
 * `cmdline` artifact, which the manifest digest — and so the release's signature — covers.
 */
export const verityArgument = (v: Verity): string =>
  `molt.verity=${v.rootHash}:${String(v.hashOffset)}`;

/** The image's kernel arguments with the verity argument after them. */
export const withVerity = (cmdline: string, v: Verity): string =>
  [cmdline, verityArgument(v)].filter((w) => w !== '').join(' ');

/** A UUID (the superblock's) from 32 hex digits. */
const uuidOf = (hex: string): string =>
  [hex.slice(0, 8), hex.slice(8, 12), hex.slice(12, 16), hex.slice(16, 20), hex.slice(20, 32)].join(
    '-',
  );

/** Append the hash tree to `image` (padding its data to a whole block first); its root and offset. */
export async function appendVerity(image: string, run: RunOptions): Promise<Verity> {
  const dataBytes = (await stat(image)).size;
  const hashOffset = Math.ceil(dataBytes / BlockBytes) * BlockBytes;
  if (hashOffset !== dataBytes) await truncate(image, hashOffset);
  const salt = (await fileDigest(image)).replace(/^sha256:/, '');
  const out = await runTool(
    'veritysetup',
    [
      'format',
      image,
      image,
      `--hash-offset=${String(hashOffset)}`,
      `--data-blocks=${String(hashOffset / BlockBytes)}`,
      `--data-block-size=${String(BlockBytes)}`,
      `--hash-block-size=${String(BlockBytes)}`,
      '--hash=sha256',
      `--salt=${salt}`,
      `--uuid=${uuidOf(salt)}`,
    ],
    { ...run, step: 'verity hash tree (veritysetup format)' },
  );
  const rootHash = /^Root hash:\s+([0-9a-f]{64})$/m.exec(out)?.[1];
  if (rootHash === undefined)
    throw new MoltError(
      ErrorCode.ImageBuildFailed,
      `veritysetup format printed no root hash: ${out.slice(-400)}`,
    );
  return { rootHash, hashOffset };
}
