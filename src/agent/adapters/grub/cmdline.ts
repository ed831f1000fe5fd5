// SPDX-License-Identifier: Apache-2.0
/** The slot's extra kernel arguments: the content of its `cmdline` artifact, if the image has one. */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { slotBootEntry, type SlotBootEntry } from '../../../core/boot/slot-entry.ts';
import type { SlotId, SlotManifest } from '../../../core/slots/slot.ts';

/** The boot entry of `slot`, reading its `cmdline` artifact (a path relative to `root`). */
export async function readSlotBootEntry(
  root: string,
  slot: SlotId,
  manifest: SlotManifest,
): Promise<SlotBootEntry> {
  const record = manifest.artifacts.cmdline;
  const cmdline = record === undefined ? '' : await readFile(join(root, record.path), 'latin1');
  return slotBootEntry(slot, manifest, cmdline);
}
