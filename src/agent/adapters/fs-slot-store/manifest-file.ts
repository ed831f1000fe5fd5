// SPDX-License-Identifier: Apache-2.0
/** Reading and atomically replacing `slots/<x>/slot.json`. */
import { join } from 'node:path';
import { slotManifestPath } from '../../../core/slots/layout.ts';
import { parseSlotManifest } from '../../../core/slots/manifest.ts';
import type { SlotId, SlotManifest } from '../../../core/slots/slot.ts';
import { writeFileAtomic } from '../fs/atomic-write.ts';
import { readJson } from './staging.ts';

/** The slot's manifest, or undefined when there is none. */
export async function readManifest(root: string, slot: SlotId): Promise<SlotManifest | undefined> {
  const json = await readJson(root, slotManifestPath(slot));
  return json === undefined
    ? undefined
    : parseSlotManifest(json, join(root, slotManifestPath(slot)));
}

export async function writeManifest(root: string, m: SlotManifest): Promise<void> {
  await writeFileAtomic(join(root, slotManifestPath(m.slot)), `${JSON.stringify(m, null, 2)}\n`);
}
