// SPDX-License-Identifier: Apache-2.0
/**
 * A completed pull laid out on disk as the OCI image source leaves it (`*.next` files, then
 * `staged.json`), for tests of the file-system slot store and of the runner on real files.
 * Artifacts with a target (the block store's partition) are written into it, as a pull does; what
 * does not fit is cut off there (a record that claims more, as a shrunk partition would).
 */
import { mkdir, open, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { artifactPath } from '../core/slots/layout.ts';
import type { ArtifactName, SlotId } from '../core/slots/slot.ts';
import { writeStaged } from '../agent/adapters/fs-slot-store/staging.ts';
import { stagedRecordOf, type StageInput } from '../agent/ports/slot-store.fake.ts';
import type { ArtifactTarget, PullTargets } from '../agent/ports/slot-store.ts';

/** Write `bytes` into `target` (no more than it holds) and sync it. */
export async function writeIntoTarget(target: ArtifactTarget, bytes: Uint8Array): Promise<void> {
  const handle = await open(target.path, 'r+');
  try {
    const n = Math.min(bytes.byteLength, target.capacity);
    await handle.write(bytes, 0, n, target.offset);
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Stage `image` for `slot` under `root`, as a finished pull (into `targets` where given). */
export async function stageOnDisk(
  root: string,
  slot: SlotId,
  image: StageInput,
  targets: PullTargets = {},
): Promise<void> {
  for (const [name, bytes] of Object.entries(image.artifacts) as [ArtifactName, Uint8Array][]) {
    const target = targets[name];
    if (target !== undefined) {
      await writeIntoTarget(target, bytes);
      continue;
    }
    const path = join(root, artifactPath(slot, name, true));
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, bytes);
  }
  await writeStaged(root, stagedRecordOf(slot, image, '2026-11-22T10:00:00.000Z'));
}
