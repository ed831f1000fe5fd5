// SPDX-License-Identifier: Apache-2.0
/** Fetching a planned installer image's layers into the staging area, one layer at a time. */
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
import { writeBlobToFile } from './write-file.ts';

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
  const path = join(i.root, artifactPath(i.slot, l.artifact, true));
  const { digest, size } = l.layer;
  // A file left by an interrupted pull of the same layer is kept when it hashes right.
  if ((await fileDigest(path, size)) === digest) {
    progress.add(size);
    return { size, digest };
  }
  i.signal?.throwIfAborted();
  await writeBlobToFile(
    (sink) => i.client.streamBlobTo(i.repository, digest, sink, i.signal),
    path,
    {
      limit: size,
      onBytes: progress.add,
    },
  );
  return { size, digest };
}

async function fetchTar(
  i: FetchInput,
  l: Extract<PlannedLayer, { kind: 'tar' }>,
  progress: Progress,
  got: Artifacts,
): Promise<void> {
  const unpacked = [...got.values()].reduce((sum, a) => sum + a.size, 0);
  i.signal?.throwIfAborted();
  const files = await unpackTarLayer({
    pump: (sink) => i.client.streamBlobTo(i.repository, l.layer.digest, sink, i.signal),
    layerDigest: l.layer.digest,
    size: l.layer.size,
    gzip: l.gzip,
    dirOf: (name) => join(i.root, areaDir(i.slot, areaOf(name), true)),
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
  for (const l of i.plan.layers) {
    if (l.kind === 'raw') got.set(l.artifact, await fetchRaw(i, l, progress));
    else await fetchTar(i, l, progress, got);
  }
  checkArtifactSet([...got.keys()]);
  return Object.fromEntries(got);
}
