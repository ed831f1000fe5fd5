// SPDX-License-Identifier: Apache-2.0
/**
 * A completed pull laid out on disk as the OCI image source leaves it (`*.next` files, then
 * `staged.json`), for tests of the file-system slot store and of the runner on real files.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { artifactPath } from '../core/slots/layout.ts';
import type { ArtifactName, SlotId } from '../core/slots/slot.ts';
import { writeStaged } from '../agent/adapters/fs-slot-store/staging.ts';
import { stagedRecordOf, type StageInput } from '../agent/ports/slot-store.fake.ts';

/** Stage `image` for `slot` under `root`, as a finished pull. */
export async function stageOnDisk(root: string, slot: SlotId, image: StageInput): Promise<void> {
  for (const [name, bytes] of Object.entries(image.artifacts) as [ArtifactName, Uint8Array][]) {
    const path = join(root, artifactPath(slot, name, true));
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, bytes);
  }
  await writeStaged(root, stagedRecordOf(slot, image, '2026-11-22T10:00:00.000Z'));
}
