// SPDX-License-Identifier: Apache-2.0
/**
 * Streaming an artifact straight into its target region (the slot's partition, docs/adr/0008 §3),
 * positioned at the region's offset: with `O_DIRECT` when the target takes it, else with the same
 * batched writes and early writeback as a staging file (`write-file.ts`). The target is opened
 * without `O_CREAT` or `O_TRUNC`: a device cannot be created or truncated, and a region of a disk
 * image must leave the rest of the image as it is.
 */
import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import type { ArtifactTarget } from '../../ports/slot-store.ts';
import { alignedBatches, writeDirect } from './direct-write.ts';
import { streamInto, type BlobPump, type WriteOptions } from './write-file.ts';

/**
 * Stream a blob into `target` (at most its capacity), fsync it, and return the byte count: with
 * `O_DIRECT` where the target takes it (`direct-write.ts`), else through the page cache.
 */
export async function writeBlobToTarget(
  pump: BlobPump,
  target: ArtifactTarget,
  o: WriteOptions,
): Promise<number> {
  const options = { ...o, limit: Math.min(o.limit, target.capacity) };
  const batches = alignedBatches(target);
  if (batches !== undefined) return writeDirect(pump, target, batches, options);
  const handle = await open(target.path, constants.O_WRONLY);
  return streamInto(handle, target.offset, pump, options);
}
