// SPDX-License-Identifier: Apache-2.0
/**
 * The last check of an installer image, run on the staged pull (`*.next`) before the inactive slot
 * is touched (DESIGN invariant 1; docs/adr/0004 §2–3, the `CheckStagedImage` command): the
 * artifact set, the size cap, the `cmdline`, and the boot entry the slot will get, rendered for
 * both back-ends exactly as they will write it. Anything here that would refuse the image later
 * (at `WriteBootEntry`, after the previous release was overwritten) refuses it now instead.
 */
import { ErrorCode, isMoltError, MoltError } from '../errors.ts';
import {
  checkArtifactSet,
  checkTotal,
  cmdlineTooLong,
  MaxCmdlineBytes,
} from '../slots/contract.ts';
import { installedManifest } from '../slots/installed.ts';
import type { StagedRecord } from '../slots/manifest.ts';
import type { ArtifactName, SlotId } from '../slots/slot.ts';
import { renderBlsEntry } from './bls.ts';
import { renderGrubEntry } from './grub-cfg.ts';
import { slotBootEntry, type SlotBootEntry } from './slot-entry.ts';

export interface StagedImageInput {
  readonly slot: SlotId;
  readonly record: StagedRecord;
  /** The staged `cmdline` artifact as bytes (one char each, latin1), '' when the image has none. */
  readonly cmdline: string;
  /** @default defaultMaxImageBytes */
  readonly maxBytes?: number;
}

function invalid(message: string, hint: string): MoltError {
  return new MoltError(ErrorCode.ImageInvalid, message, { hint });
}

/**
 * Check the staged image of `slot`; returns the boot entry the slot will get (its `version` is the
 * generation `install` fixes later, a number either way). Throws `MOLT_IMAGE_INVALID`,
 * `MOLT_IMAGE_TOO_LARGE`, or `MOLT_MACHINE_INVALID` for a record that is not the slot's.
 */
export function checkStagedImage(input: StagedImageInput): SlotBootEntry {
  const { slot, record } = input;
  if (record.slot !== slot)
    throw new MoltError(
      ErrorCode.MachineInvalid,
      `the image staged for slot ${slot} says it is for slot ${record.slot}`,
      { hint: 'the staging area was damaged; start the upgrade again' },
    );
  const sizes = Object.entries(record.artifacts).map(([name, a]) => [name, a.size] as const);
  checkArtifactSet(sizes.map(([name]) => name as ArtifactName));
  checkTotal(
    sizes.reduce((sum, [, size]) => sum + size, 0),
    input.maxBytes,
  );
  const kernel = record.artifacts.vmlinuz;
  if (kernel?.size === 0)
    throw invalid('the image has an empty vmlinuz', 'an installer image carries a kernel to boot');
  if (input.cmdline.length > MaxCmdlineBytes) throw cmdlineTooLong(input.cmdline.length);
  const manifest = installedManifest({
    slot,
    record,
    operationId: 'staged',
    generation: record.generation ?? 1,
    writtenAt: record.pulledAt,
  });
  const entry = slotBootEntry(slot, manifest, input.cmdline);
  renderBothBackEnds(entry);
  return entry;
}

/** Both back-ends' renderers refuse what their bootloader would misread: run them now, not at write. */
function renderBothBackEnds(entry: SlotBootEntry): void {
  try {
    renderGrubEntry(entry);
    renderBlsEntry({ ...entry, sortKey: 'molt' });
  } catch (e) {
    if (!isMoltError(e)) throw e;
    throw new MoltError(ErrorCode.ImageInvalid, `the image's boot entry: ${e.message}`, {
      hint: 'the kernel arguments and paths must be ones GRUB and systemd-boot read as written',
      cause: e,
    });
  }
}
