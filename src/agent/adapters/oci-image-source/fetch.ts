// SPDX-License-Identifier: Apache-2.0
/** Fetching a planned installer image's layers into the staging area, one layer at a time. */
import { openSync } from 'node:fs';
import { join } from 'node:path';
import {
  checkArtifactSet,
  type ArtifactPlan,
  type PlannedLayer,
} from '../../../core/slots/contract.ts';
import { areaDir, areaOf, artifactPath } from '../../../core/slots/layout.ts';
import type { StagedArtifact } from '../../../core/slots/manifest.ts';
import type { ArtifactName, SlotId } from '../../../core/slots/slot.ts';
import type { OciRegistryClient } from '../../../oci/index.ts';
import type { PullProgress } from '../../ports/image-source.ts';
import { unpackTarLayer } from './tar-layer.ts';
import { fileDigest } from '../fs-slot-store/file-digest.ts';
import { writeBlobToFile, type BlobPump } from './write-file.ts';
import { writeBlobToTarget } from './write-target.ts';
import { InPlace } from './in-place.ts';

export interface FetchInput {
  readonly client: OciRegistryClient;
  readonly repository: string;
  readonly root: string;
  readonly slot: SlotId;
  readonly plan: ArtifactPlan;
  readonly maxBytes: number;
  readonly onProgress?: (p: PullProgress) => void;
  /** Aborts the transfer in flight (cancel, pull deadline). */
  readonly signal?: AbortSignal;
  /** Artifacts written straight into the slot (a partition), not staged. */
  readonly inPlace: InPlace;
}

type Artifacts = Map<ArtifactName, StagedArtifact>;

class Progress {
  private bytes = 0;
  private readonly total: number;
  private readonly report: ((p: PullProgress) => void) | undefined;
  constructor(total: number, report: ((p: PullProgress) => void) | undefined) {
    this.total = total;
    this.report = report;
  }
  add = (n: number): void => {
    this.bytes += n;
    this.report?.({ bytes: this.bytes, total: this.total });
  };
}

async function fetchRaw(
  i: FetchInput,
  l: Extract<PlannedLayer, { kind: 'raw' }>,
  progress: Progress,
): Promise<StagedArtifact> {
  const { digest, size } = l.layer;
  const pump: BlobPump = (sink) => i.client.streamBlobTo(i.repository, digest, sink, i.signal);
  const target = i.inPlace.target(l.artifact);
  if (target !== undefined) {
    // Never reused after a crash: a partition's old bytes are not a half pull to trust.
    await i.inPlace.overwrite();
    i.signal?.throwIfAborted();
    await writeBlobToTarget(pump, target, { limit: size, onBytes: progress.add });
    return { size, digest };
  }
  const path = join(i.root, artifactPath(i.slot, l.artifact, true));
  // A file left by an interrupted pull of the same layer is kept when it hashes right.
  if ((await fileDigest(path, size)) === digest) {
    progress.add(size);
    return { size, digest };
  }
  i.signal?.throwIfAborted();
  await writeBlobToFile(pump, path, { limit: size, onBytes: progress.add });
  return { size, digest };
}

async function fetchTar(
  i: FetchInput,
  l: Extract<PlannedLayer, { kind: 'tar' }>,
  progress: Progress,
  got: Artifacts,
): Promise<void> {
  const unpacked = [...got.values()].reduce((sum, a) => sum + a.size, 0);
  // Only the entry headers tell what a tar layer holds: an in-place artifact not yet fetched may
  // be in it, so its slot is made unbootable before the layer is read.
  if (i.inPlace.names().some((name) => !got.has(name))) await i.inPlace.overwrite();
  i.signal?.throwIfAborted();
  const files = await unpackTarLayer({
    pump: (sink) => i.client.streamBlobTo(i.repository, l.layer.digest, sink, i.signal),
    layerDigest: l.layer.digest,
    size: l.layer.size,
    gzip: l.gzip,
    openFile: (name, size) => {
      const target = i.inPlace.target(name);
      if (target !== undefined) return InPlace.openTarget(name, size, target);
      const path = join(i.root, areaDir(i.slot, areaOf(name), true), name);
      return { fd: openSync(path, 'w', 0o644), position: 0 };
    },
    taken: new Set(got.keys()),
    budget: i.maxBytes - unpacked,
    onBytes: progress.add,
  });
  for (const [name, a] of files) got.set(name, a);
}

/** Fetch every layer; returns the staged artifacts once the full set passed the contract. */
export async function fetchArtifacts(
  i: FetchInput,
): Promise<Partial<Record<ArtifactName, StagedArtifact>>> {
  const progress = new Progress(i.plan.totalBytes, i.onProgress);
  const got: Artifacts = new Map();
  // Staged raw artifacts first (the cmdline among them), so the pre-checks can read them before
  // the slot is overwritten; then those written in place, then tar layers.
  const staged = (l: PlannedLayer) =>
    l.kind === 'raw' && i.inPlace.target(l.artifact) === undefined;
  const layers =
    i.inPlace.names().length === 0
      ? i.plan.layers
      : [...i.plan.layers.filter(staged), ...i.plan.layers.filter((l) => !staged(l))];
  for (const l of layers) {
    if (l.kind === 'raw') got.set(l.artifact, await fetchRaw(i, l, progress));
    else await fetchTar(i, l, progress, got);
  }
  checkArtifactSet([...got.keys()]);
  return Object.fromEntries(got);
}
