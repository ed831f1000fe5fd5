// SPDX-License-Identifier: Apache-2.0
/**
 * The `slot.json` a staged pull becomes (docs/adr/0004 §2): one pure function, so the manifest
 * the staged image is checked as ({@link checkStagedImage}) is the one `install` writes, field for
 * field. An install writes it `writing`; the slot turns `ready` only after its boot entry was
 * written (`MarkSlotReady`), so a `ready` slot is always one that can be booted and rolled back to.
 */
import { artifactPath } from './layout.ts';
import type { StagedRecord } from './manifest.ts';
import type { ArtifactName, ArtifactRecord, SlotId, SlotManifest, SlotStatus } from './slot.ts';

export interface InstalledManifestInput {
  readonly slot: SlotId;
  readonly record: StagedRecord;
  readonly operationId: string;
  readonly generation: number;
  /** ISO 8601. */
  readonly writtenAt: string;
  /** @default 'writing' */
  readonly status?: SlotStatus;
}

/** The manifest of `slot` once the staged `record` is moved into it (artifact paths in the slot, not in `*.next`). */
export function installedManifest(i: InstalledManifestInput): SlotManifest {
  const artifacts: Partial<Record<ArtifactName, ArtifactRecord>> = {};
  for (const [name, a] of Object.entries(i.record.artifacts))
    artifacts[name as ArtifactName] = { ...a, path: artifactPath(i.slot, name as ArtifactName) };
  const r = i.record;
  return {
    schema: 1,
    slot: i.slot,
    status: i.status ?? 'writing',
    imageRef: r.imageRef,
    imageDigest: r.imageDigest,
    manifestDigest: r.manifestDigest,
    version: r.version,
    ...(r.kubeletVersion !== undefined && { kubeletVersion: r.kubeletVersion }),
    generation: i.generation,
    artifacts,
    ...(r.lab !== undefined && { lab: r.lab }),
    operationId: i.operationId,
    writtenAt: i.writtenAt,
  };
}
