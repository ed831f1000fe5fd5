// SPDX-License-Identifier: Apache-2.0
/** What every {@link ImagePins} must do; run against the fake and against a real containerd. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ErrorCode } from '../core/errors.ts';
import type { ImagePins } from '../agent/ports/image-pins.ts';

/** Images by digest: `a` and `b` the registry serves, `missing` it does not. */
export interface PinImages {
  readonly a: string;
  readonly b: string;
  readonly missing: string;
}

/** @param create a runtime holding none of `images` (a fresh one, or a fresh namespace). */
export function imagePinsConformance(
  name: string,
  create: () => Promise<{ pins: ImagePins; images: PinImages }>,
): void {
  describe(`ImagePins conformance: ${name}`, () => {
    it('pulls a missing image and pins it; pinning again changes nothing', async () => {
      const { pins, images } = await create();
      assert.equal(await pins.present(images.a), false);
      await pins.pin(images.a);
      assert.equal(await pins.present(images.a), true);
      assert.deepEqual(await pins.pinned(), [images.a]);
      await pins.pin(images.a);
      assert.deepEqual(await pins.pinned(), [images.a]);
    });

    it('unpins without removing the image, and lists only what is pinned', async () => {
      const { pins, images } = await create();
      await pins.pin(images.a);
      await pins.pin(images.b);
      assert.deepEqual((await pins.pinned()).sort(), [images.a, images.b].sort());
      await pins.unpin(images.a);
      assert.deepEqual(await pins.pinned(), [images.b]);
      assert.equal(await pins.present(images.a), true);
      await pins.unpin(images.a);
      assert.deepEqual(await pins.pinned(), [images.b]);
    });

    it('unpins an image it does not hold without an error', async () => {
      const { pins, images } = await create();
      await pins.unpin(images.b);
      assert.equal(await pins.present(images.b), false);
      assert.deepEqual(await pins.pinned(), []);
    });

    it('refuses an image the registry does not serve, MOLT_IMAGE_PIN_FAILED naming it', async () => {
      const { pins, images } = await create();
      await assert.rejects(pins.pin(images.missing), (error: Error & { code?: string }) => {
        assert.equal(error.code, ErrorCode.ImagePinFailed);
        assert.ok(error.message.includes(images.missing), error.message);
        return true;
      });
      assert.equal(await pins.present(images.missing), false);
      assert.deepEqual(await pins.pinned(), []);
    });
  });
}
