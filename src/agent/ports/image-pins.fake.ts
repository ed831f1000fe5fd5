// SPDX-License-Identifier: Apache-2.0
/** In-memory {@link ImagePins} for unit tests; passes `testkit/image-pins-conformance.ts`. */
import { ErrorCode, MoltError } from '../../core/errors.ts';
import type { ImagePins, PinnedRecord, PinnedRecordStore } from './image-pins.ts';

/** The fake runtime: which images it holds (name → pinned) and what its registry can serve. */
export interface FakeImagePins extends ImagePins {
  readonly images: Map<string, boolean>;
  /** Names a pull succeeds for. */
  readonly pullable: Set<string>;
  /** Every pull, in order. */
  readonly pulls: string[];
}

export function createFakeImagePins(pullable: Iterable<string> = []): FakeImagePins {
  const images = new Map<string, boolean>();
  const pulls: string[] = [];
  const fake: FakeImagePins = {
    images,
    pullable: new Set(pullable),
    pulls,
    pin(reference) {
      if (!images.has(reference)) {
        if (!fake.pullable.has(reference))
          return Promise.reject(
            new MoltError(ErrorCode.ImagePinFailed, `cannot pull ${reference}: not found`),
          );
        pulls.push(reference);
      }
      images.set(reference, true);
      return Promise.resolve();
    },
    unpin(reference) {
      if (images.has(reference)) images.set(reference, false);
      return Promise.resolve();
    },
    pinned: () => Promise.resolve([...images].filter(([, pinned]) => pinned).map(([name]) => name)),
    present: (reference) => Promise.resolve(images.has(reference)),
  };
  return fake;
}

/** In-memory {@link PinnedRecordStore}. */
export function createMemoryPinnedRecord(): PinnedRecordStore & { readonly saves: PinnedRecord[] } {
  let record: PinnedRecord = { wanted: [], ours: [] };
  const saves: PinnedRecord[] = [];
  return {
    saves,
    load: () => Promise.resolve(structuredClone(record)),
    save(next) {
      record = structuredClone(next);
      saves.push(record);
      return Promise.resolve();
    },
  };
}
