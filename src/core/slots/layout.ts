// SPDX-License-Identifier: Apache-2.0
/**
 * Where a slot's files live under the machine root (docs/adr/0004 §2). The kernel and initramfs
 * go to the ESP, because Boot Loader Spec `linux` paths are ESP-relative; the rootfs and the
 * kernel command line go to the slot directory beside `slot.json`. A pull writes the same names
 * under `<dir>.next`, which `install` renames over the slot's directories.
 */
import { slotDir, type ArtifactName, type SlotId } from './slot.ts';

export type SlotArea = 'esp' | 'slot';

/** The area an artifact belongs to. */
export function areaOf(name: ArtifactName): SlotArea {
  return name === 'vmlinuz' || name === 'initrd.img' ? 'esp' : 'slot';
}

/** Directory (relative to the root) of one area of a slot, or of its staging area. */
export function areaDir(slot: SlotId, area: SlotArea, staging = false): string {
  const base = area === 'esp' ? `esp/molt/${slotDir(slot)}` : `slots/${slotDir(slot)}`;
  return staging ? `${base}.next` : base;
}

/** Path (relative to the root) of an artifact in the slot, or in its staging area. */
export function artifactPath(slot: SlotId, name: ArtifactName, staging = false): string {
  return `${areaDir(slot, areaOf(name), staging)}/${name}`;
}

/** `slots/<x>/slot.json`. */
export function slotManifestPath(slot: SlotId): string {
  return `${areaDir(slot, 'slot')}/slot.json`;
}

/** `slots/<x>.next/staged.json`: written last by a pull, so its presence means the pull completed. */
export function stagedRecordPath(slot: SlotId): string {
  return `${areaDir(slot, 'slot', true)}/staged.json`;
}

/** The same record once `install` moved the staging directory into place (present only mid-install). */
export function installingRecordPath(slot: SlotId): string {
  return `${areaDir(slot, 'slot')}/staged.json`;
}
