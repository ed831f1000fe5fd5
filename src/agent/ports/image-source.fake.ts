// SPDX-License-Identifier: Apache-2.0
/**
 * In-memory {@link ImageSource}: images are declared up front (or as the error their pull fails
 * with), and a pull stages them into a {@link FakeSlotStore}, as the OCI adapter does on disk.
 */
import { ErrorCode, MoltError } from '../../core/errors.ts';
import type { ArtifactName, SlotId } from '../../core/slots/slot.ts';
import type { ImageSource, PullOptions } from './image-source.ts';
import type { StagedImage } from './slot-store.ts';
import type { FakeSlotStore, StageInput } from './slot-store.fake.ts';

/**
 * An image the fake registry serves: what a pull stages, without `imageRef` (the pull's
 * reference), and the config labels its pull resolves (none by default).
 */
export type FakeImage = Omit<StageInput, 'imageRef'> & {
  readonly labels?: Readonly<Record<string, string>>;
};
/** An image whose pull never finishes by itself: it ends only when its signal aborts (a stuck registry). */
export const HangingImage = 'hang';

export interface FakeImageSource extends ImageSource {
  readonly pulls: { readonly image: string; readonly slot: SlotId }[];
  /** Add or replace an image (or the error pulling it fails with). */
  set(image: string, value: FakeImage | MoltError | typeof HangingImage): void;
}

export function createFakeImageSource(
  store: FakeSlotStore,
  images: Readonly<Record<string, FakeImage | MoltError | typeof HangingImage>> = {},
): FakeImageSource {
  const known = new Map<string, FakeImage | MoltError | typeof HangingImage>(
    Object.entries(images),
  );
  const pulls: { image: string; slot: SlotId }[] = [];
  return {
    pulls,
    set: (image, value) => {
      known.set(image, value);
    },
    async pull(image: string, slot: SlotId, options: PullOptions = {}): Promise<StagedImage> {
      pulls.push({ image, slot });
      const found = known.get(image);
      if (found === HangingImage) return hang(options, () => store.discardStaged(slot));
      if (found === undefined || found instanceof Error) {
        await store.discardStaged(slot);
        throw (
          found ?? new MoltError(ErrorCode.RegistryNotFound, `fake image source: no image ${image}`)
        );
      }
      try {
        await options.checkResolved?.({
          digest: found.imageDigest,
          version: found.version,
          labels: found.labels ?? {},
        });
      } catch (e) {
        await store.discardStaged(slot);
        throw e;
      }
      const total = Object.values(found.artifacts).reduce((sum, a) => sum + a.byteLength, 0);
      await beforeInPlace(found, options);
      options.onProgress?.({ bytes: total, total });
      store.stage(slot, { ...found, imageRef: image });
      return { imageRef: image, imageDigest: found.imageDigest, version: found.version };
    },
  };
}

/**
 * As the OCI source: an in-place artifact larger than its target is refused before any byte, and
 * otherwise `beforeOverwrite` runs before the first one.
 */
async function beforeInPlace(found: FakeImage, options: PullOptions): Promise<void> {
  if (options.inPlace === undefined) return;
  for (const [name, target] of Object.entries(options.inPlace.targets)) {
    const size = found.artifacts[name as ArtifactName]?.byteLength ?? 0;
    if (size > target.capacity)
      throw new MoltError(
        ErrorCode.ImageTooLarge,
        `fake image source: ${name} is ${size} bytes, larger than ${target.path}`,
      );
  }
  await options.inPlace.beforeOverwrite();
}

/** A pull that reports progress and waits for its signal; then it cleans up and fails with the reason. */
async function hang(options: PullOptions, discard: () => Promise<void>): Promise<never> {
  options.onProgress?.({ bytes: 0, total: 1 });
  const signal = options.signal;
  if (signal === undefined) return new Promise<never>(() => undefined);
  await new Promise<void>((resolve) => {
    if (signal.aborted) resolve();
    signal.addEventListener('abort', () => {
      resolve();
    });
  });
  await discard();
  throw signal.reason;
}
