// SPDX-License-Identifier: Apache-2.0
/**
 * The pull behind {@link createOciImageSource} (docs/adr/0004 §2, §3 PullImage). A pull resolves the
 * reference, checks the contract from the descriptors, then streams each artifact into the slot's
 * staging area, hashing as it writes, and writes `staged.json` last. A failure removes the staging
 * area; the slot directories are never touched. A re-run after a crash reuses a complete staged
 * pull of the same manifest, or at least the raw artifact files that already hash right.
 */
import { join } from 'node:path';
import { defaultMaxImageBytes } from '../../../core/slots/contract.ts';
import { artifactPath } from '../../../core/slots/layout.ts';
import type { StagedRecord } from '../../../core/slots/manifest.ts';
import { parseImageReference } from '../../../core/slots/reference.ts';
import type { SlotId } from '../../../core/slots/slot.ts';
import type { ImageSource, PullOptions } from '../../ports/image-source.ts';
import type { StagedImage } from '../../ports/slot-store.ts';
import {
  prepareStaging,
  readStaged,
  removeStaging,
  syncStaging,
  writeStaged,
} from '../fs-slot-store/staging.ts';
import { fetchArtifacts } from './fetch.ts';
import { fileDigest } from '../fs-slot-store/file-digest.ts';
import { registryClientFor } from './client.ts';
import type { OciImageSourceOptions } from './options.ts';
import { resolveInstaller, type ResolvedInstaller } from './resolve.ts';

function stagedImage(r: StagedRecord): StagedImage {
  return { imageRef: r.imageRef, imageDigest: r.imageDigest, version: r.version };
}

/** A complete staged pull of the same manifest whose files all still hash right. */
async function reusable(
  root: string,
  slot: SlotId,
  target: ResolvedInstaller,
): Promise<StagedRecord | undefined> {
  const previous = await readStaged(root, slot).catch(() => undefined);
  if (previous?.manifestDigest !== target.resolved.manifestDigest) return undefined;
  for (const [name, a] of Object.entries(previous.artifacts)) {
    const digest = await fileDigest(
      join(root, artifactPath(slot, name as keyof typeof previous.artifacts, true)),
      a.size,
    );
    if (digest !== a.digest) return undefined;
  }
  return previous;
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
        signal?.throwIfAborted();
        const previous = await reusable(o.root, slot, target);
        if (previous !== undefined) {
          onProgress?.({ bytes: target.plan.totalBytes, total: target.plan.totalBytes });
          return stagedImage(previous);
        }
        const raw = target.plan.layers.flatMap((l) => (l.kind === 'raw' ? [l.artifact] : []));
        await prepareStaging(o.root, slot, new Set(raw));
        try {
          const artifacts = await fetchArtifacts({
            client,
            repository: ref.repository,
            root: o.root,
            slot,
            plan: target.plan,
            maxBytes,
            ...(onProgress && { onProgress }),
            ...(signal && { signal }),
          });
          await syncStaging(o.root, slot);
          signal?.throwIfAborted();
          const record: StagedRecord = {
            schema: 1,
            slot,
            imageRef: image,
            imageDigest: target.resolved.digest,
            manifestDigest: target.resolved.manifestDigest,
            version: target.plan.version,
            ...(target.plan.lab !== undefined && { lab: target.plan.lab }),
            artifacts,
            pulledAt: now().toISOString(),
          };
          await writeStaged(o.root, record);
          return stagedImage(record);
        } catch (e) {
          await removeStaging(o.root, slot);
          throw e;
        }
      } finally {
        await client.close();
      }
    },
  };
}
