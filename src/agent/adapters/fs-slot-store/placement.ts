// SPDX-License-Identifier: Apache-2.0
/**
 * Where an artifact lives: a file under the machine root, or a region kept in place (the block
 * store's rootfs partition, docs/adr/0008 §3), and how each is checked.
 */
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { ErrorCode, MoltError } from '../../../core/errors.ts';
import type { ArtifactName } from '../../../core/slots/slot.ts';
import type { ArtifactTarget } from '../../ports/slot-store.ts';
import { fileDigest, regionDigest } from './file-digest.ts';

/** The artifact's digest where it lives, or undefined when it is missing or of another size. */
export async function artifactDigest(
  root: string,
  a: { readonly path: string; readonly size: number },
  target: ArtifactTarget | undefined,
): Promise<string | undefined> {
  if (target === undefined) return fileDigest(join(root, a.path), a.size);
  return a.size > target.capacity ? undefined : regionDigest(target.path, target.offset, a.size);
}

/** Whether an artifact of `size` bytes is there: a staged file of that size, or room in its target. */
export async function present(
  path: string,
  size: number,
  target: ArtifactTarget | undefined,
): Promise<boolean> {
  if (target !== undefined) return size <= target.capacity;
  return (await stat(path).catch(() => undefined))?.size === size;
}

/** `MOLT_IMAGE_TOO_LARGE` unless an artifact of `size` bytes fits its target (the slot's partition). */
export function checkFits(name: ArtifactName, size: number, target: ArtifactTarget): void {
  if (size <= target.capacity) return;
  throw new MoltError(
    ErrorCode.ImageTooLarge,
    `the image's ${name} is ${size} bytes, larger than the ${target.capacity}-byte slot partition ${target.path}`,
    {
      hint: 'build a smaller image, or install the machine with larger slots (molt install --slot-size)',
      details: { artifact: name, size, capacity: target.capacity, target: target.path },
    },
  );
}
