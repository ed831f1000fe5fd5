// SPDX-License-Identifier: Apache-2.0
/**
 * The pull behind {@link createOciImageSource} (docs/adr/0004 §2, §3 PullImage). A pull resolves the
 * reference, checks the contract from the descriptors, then streams each artifact into the slot's
 * staging area, hashing as it writes, and writes `staged.json` last. A failure removes the staging
 * area; the slot directories are never touched. Artifacts the slot store keeps in place (the
 * rootfs in its partition) are streamed into their target instead, after every check that needs
 * no bytes and the caller's `beforeOverwrite` (docs/adr/0008 §3). A re-run after a crash reuses a complete staged
 * pull of the same manifest, or at least the raw artifact files that already hash right.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { checkStagedImage } from '../../../core/boot/staged-image.ts';
import { ReleaseLabel } from '../../../core/releases/release.ts';
import { defaultMaxImageBytes } from '../../../core/slots/contract.ts';
import { artifactPath } from '../../../core/slots/layout.ts';
import type { StagedArtifact, StagedRecord } from '../../../core/slots/manifest.ts';
import { parseImageReference } from '../../../core/slots/reference.ts';
import type { ArtifactName, SlotId } from '../../../core/slots/slot.ts';
import type { ImageSource, PullOptions } from '../../ports/image-source.ts';
import type { StagedImage } from '../../ports/slot-store.ts';
import {
  prepareStaging,
  readStaged,
  removeStaging,
  syncStaging,
  writeStaged,
} from '../fs-slot-store/staging.ts';
import { fetchArtifacts, type FetchInput } from './fetch.ts';
import { fileDigest, regionDigest } from '../fs-slot-store/file-digest.ts';
import { registryClientFor } from './client.ts';
import { InPlace } from './in-place.ts';
import type { OciImageSourceOptions } from './options.ts';
import { resolveInstaller, type ResolvedInstaller } from './resolve.ts';

function stagedImage(r: StagedRecord): StagedImage {
  return { imageRef: r.imageRef, imageDigest: r.imageDigest, version: r.version };
}

/**
 * A complete staged pull of the same manifest whose files all still hash right; in-place
 * artifacts are re-read from their target (its record was written after they were synced).
 */
async function reusable(
  root: string,
  slot: SlotId,
  target: ResolvedInstaller,
  inPlace: InPlace,
): Promise<StagedRecord | undefined> {
  const previous = await readStaged(root, slot).catch(() => undefined);
  if (previous?.manifestDigest !== target.resolved.manifestDigest) return undefined;
  for (const [key, a] of Object.entries(previous.artifacts)) {
    const name = key as ArtifactName;
    const place = inPlace.target(name);
    const digest =
      place === undefined
        ? await fileDigest(join(root, artifactPath(slot, name, true)), a.size)
        : await regionDigest(place.path, place.offset, a.size);
    if (digest !== a.digest) return undefined;
  }
  return previous;
}

interface PullRun {
  readonly image: string;
  readonly slot: SlotId;
  readonly target: ResolvedInstaller;
  readonly pulledAt: string;
}

/** `staged.json` of the pull, with `artifacts`. */
function recordOf(r: PullRun, artifacts: StagedRecord['artifacts']): StagedRecord {
  const { target } = r;
  // Kept with the slot: after the reboot the node must report this kubelet (kube-node-ready).
  const kubeletVersion = target.labels[ReleaseLabel.KubeletVersion];
  return {
    schema: 1,
    slot: r.slot,
    imageRef: r.image,
    imageDigest: target.resolved.digest,
    manifestDigest: target.resolved.manifestDigest,
    version: target.plan.version,
    ...(kubeletVersion !== undefined && { kubeletVersion }),
    ...(target.plan.lab !== undefined && { lab: target.plan.lab }),
    artifacts,
    pulledAt: r.pulledAt,
  };
}

/**
 * The staged checks (core `checkStagedImage`: artifact set, sizes, the `cmdline` and the boot
 * entry it makes), run before the first byte is written in place, on what is known by then: every
 * raw artifact from its descriptor, and the staged `cmdline`, fetched first (`fetch.ts`). With tar
 * layers the artifact set is only known from the entries: the slot store's `checkStaged` runs them.
 */
function precheck(root: string, r: PullRun, maxBytes: number): () => Promise<void> {
  return async () => {
    const artifacts: Record<string, StagedArtifact> = {};
    for (const l of r.target.plan.layers) {
      if (l.kind === 'tar') return;
      artifacts[l.artifact] = { size: l.layer.size, digest: l.layer.digest };
    }
    const cmdline =
      artifacts['cmdline'] === undefined
        ? ''
        : await readFile(join(root, artifactPath(r.slot, 'cmdline', true)), 'latin1');
    checkStagedImage({ slot: r.slot, record: recordOf(r, artifacts), cmdline, maxBytes });
  };
}

/** Fetch every layer into a fresh staging area (and the targets), then write `staged.json` last. */
async function fetchAll(root: string, run: PullRun, input: FetchInput): Promise<StagedImage> {
  const raw = run.target.plan.layers.flatMap((l) => (l.kind === 'raw' ? [l.artifact] : []));
  await prepareStaging(root, run.slot, new Set(raw));
  try {
    const artifacts = await fetchArtifacts(input);
    await syncStaging(root, run.slot);
    input.signal?.throwIfAborted();
    const record = recordOf(run, artifacts);
    await writeStaged(root, record);
    return stagedImage(record);
  } catch (e) {
    await removeStaging(root, run.slot);
    throw e;
  }
}

export function createPuller(o: OciImageSourceOptions): ImageSource {
  const maxBytes = o.maxBytes ?? defaultMaxImageBytes;
  const platform = o.platform ?? { os: 'linux', architecture: 'amd64' };
  const now = o.now ?? (() => new Date());
  return {
    async pull(image: string, slot: SlotId, options: PullOptions = {}): Promise<StagedImage> {
      const { onProgress, signal } = options;
      const ref = parseImageReference(image);
      const client = registryClientFor(o, ref.registry);
      try {
        const target = await resolveInstaller(client, ref, {
          platform,
          maxBytes,
          publicKeyPem: o.publicKeyPem,
        });
        await options.checkResolved?.({
          digest: target.resolved.digest,
          version: target.plan.version,
          labels: target.labels,
        });
        const run: PullRun = { image, slot, target, pulledAt: now().toISOString() };
        const inPlace = new InPlace(options.inPlace, precheck(o.root, run, maxBytes));
        inPlace.checkPlan(target.plan);
        signal?.throwIfAborted();
        const previous = await reusable(o.root, slot, target, inPlace);
        if (previous !== undefined) {
          // The slot holds this pull's bytes, not its manifest's: unbootable either way.
          await inPlace.overwrite();
          onProgress?.({ bytes: target.plan.totalBytes, total: target.plan.totalBytes });
          return stagedImage(previous);
        }
        return await fetchAll(o.root, run, {
          client,
          repository: ref.repository,
          root: o.root,
          slot,
          plan: target.plan,
          maxBytes,
          inPlace,
          ...(onProgress && { onProgress }),
          ...(signal && { signal }),
        });
      } finally {
        await client.close();
      }
    },
  };
}
