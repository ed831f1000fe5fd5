// SPDX-License-Identifier: Apache-2.0
/**
 * In-memory {@link ImageSource}: images are declared up front (or as the error their pull fails
 * with), and a pull stages them into a {@link FakeSlotStore}, as the OCI adapter does on disk.
 */
import { ErrorCode, MoltError } from '../../core/errors.ts';
import type { SlotId } from '../../core/slots/slot.ts';
import type { ImageSource, PullProgress } from './image-source.ts';
import type { StagedImage } from './slot-store.ts';
import type { FakeSlotStore, StageInput } from './slot-store.fake.ts';

/** An image the fake registry serves: what a pull stages, without `imageRef` (the pull's reference). */
export type FakeImage = Omit<StageInput, 'imageRef'>;

export interface FakeImageSource extends ImageSource {
  readonly pulls: { readonly image: string; readonly slot: SlotId }[];
  /** Add or replace an image (or the error pulling it fails with). */
  set(image: string, value: FakeImage | MoltError): void;
}

export function createFakeImageSource(
  store: FakeSlotStore,
  images: Readonly<Record<string, FakeImage | MoltError>> = {},
): FakeImageSource {
  const known = new Map<string, FakeImage | MoltError>(Object.entries(images));
  const pulls: { image: string; slot: SlotId }[] = [];
  return {
    pulls,
    set: (image, value) => {
      known.set(image, value);
    },
    async pull(
      image: string,
      slot: SlotId,
      onProgress?: (p: PullProgress) => void,
    ): Promise<StagedImage> {
      pulls.push({ image, slot });
      const found = known.get(image);
      if (found === undefined || found instanceof Error) {
        await store.discardStaged(slot);
        throw (
          found ?? new MoltError(ErrorCode.RegistryNotFound, `fake image source: no image ${image}`)
        );
      }
      const total = Object.values(found.artifacts).reduce((sum, a) => sum + a.byteLength, 0);
      onProgress?.({ bytes: total, total });
      store.stage(slot, { ...found, imageRef: image });
      return { imageRef: image, imageDigest: found.imageDigest, version: found.version };
    },
  };
}
