// SPDX-License-Identifier: Apache-2.0
/**
 * The images a node keeps pinned (docs/adr/0015 §7): the operator sends the whole list each time;
 * the agent pins each one and unpins what it pinned before that the list no longer names. Which
 * pins are this agent's is remembered on STATE (`state/kubernetes/pinned.json`), so an image
 * someone else pinned (containerd pins the sandbox image itself) is never unpinned by molt, and
 * the record survives restarts and reboots (containerd's images live on EPHEMERAL; the list is
 * asked for again after a wipe, and a pin pulls what is missing).
 *
 * Crash safety: the record names every image about to be pinned before the first label is set,
 * so a crash halfway leaves no label molt would forget to remove. When a pull fails nothing is
 * unpinned: the images kept before stay kept until the new list is wholly in place.
 */
import { ErrorCode, MoltError, isMoltError } from '../../core/errors.ts';
import type { PinnedImagesAnswer } from '../../protocol/agent-images.ts';
import type { ImagePins, PinnedRecordStore } from '../ports/image-pins.ts';

export interface PinnedImages {
  /** Keep exactly `images` pinned; one call at a time (a second waits for the first). */
  set(images: readonly string[]): Promise<PinnedImagesAnswer>;
  /** The list last asked for. */
  current(): Promise<PinnedImagesAnswer>;
}

export function createPinnedImages(o: {
  pins: ImagePins;
  record: PinnedRecordStore;
}): PinnedImages {
  let queue: Promise<unknown> = Promise.resolve();
  const serial = <T>(work: () => Promise<T>): Promise<T> => {
    const next = queue.then(work, work);
    queue = next.catch(() => undefined);
    return next;
  };
  const save = (record: { wanted: string[]; ours: string[] }): Promise<void> =>
    o.record.save(record);
  return {
    current: () => serial(async () => ({ pinned: [...(await o.record.load()).wanted] })),
    set: (images) =>
      serial(async () => {
        const before = await o.record.load();
        const labelled = new Set(await o.pins.pinned());
        // An image already labelled that this agent did not label is someone else's pin.
        const others = new Set([...labelled].filter((name) => !before.ours.includes(name)));
        const ours = union(
          before.ours,
          images.filter((name) => !others.has(name)),
        );
        await save({ wanted: [...images], ours });
        const failures: string[] = [];
        for (const name of images) {
          try {
            await o.pins.pin(name);
          } catch (error) {
            if (!isMoltError(error)) throw error;
            failures.push(error.message);
          }
        }
        if (failures.length > 0)
          throw new MoltError(
            ErrorCode.ImagePinFailed,
            `${String(failures.length)} of ${String(images.length)} images not pinned (nothing was unpinned): ${failures.join('; ')}`,
            {
              hint: 'the operator asks again on its next pass; check that the registry serves these digests',
              retryable: true,
            },
          );
        const stale = ours.filter((name) => !images.includes(name));
        for (const name of stale) await o.pins.unpin(name);
        await save({ wanted: [...images], ours: ours.filter((name) => images.includes(name)) });
        return { pinned: [...images], unpinned: stale };
      }),
  };
}

function union(a: readonly string[], b: readonly string[]): string[] {
  return [...new Set([...a, ...b])];
}
