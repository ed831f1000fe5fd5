// SPDX-License-Identifier: Apache-2.0
/**
 * The container images a Kubernetes node keeps (docs/adr/0015 §7): the operator tells each node
 * agent the whole list of images by digest it must keep — the GM images of its pool's image
 * policies, and the digest an image rollout is moving away from until that rollout ends — and the
 * agent pulls each into containerd and pins it there (the CRI's `io.cri-containerd.pinned` label,
 * so the kubelet's image garbage collection never removes it). Field names are a public contract,
 * as in `agent.ts`; bodies are `.strict()`.
 *
 * `PUT` is `operate` (the operator, or an admin); `GET` is `read`. A machine without a node
 * runtime answers `MOLT_NOT_KUBERNETES_NODE` to both.
 */
import { z } from 'zod';
import { parseImageReference } from '../core/slots/reference.ts';

export const ImageRoutes = {
  /**
   * PUT {@link PinnedImagesBody} → {@link PinnedImagesAnswer}: keep exactly these images pinned —
   * pull each one containerd lacks, pin it, and unpin what this agent pinned before that the list
   * no longer names (the image itself stays until the kubelet collects it). Idempotent. When an
   * image cannot be pulled, nothing is unpinned and the answer is `MOLT_IMAGE_PIN_FAILED` naming
   * it. GET → {@link PinnedImagesAnswer}: the list last asked for.
   */
  pinned: '/v1/images/pinned',
} as const;

/** Most images one machine is asked to keep: GM pins are few, and each is a pull. */
export const MaxPinnedImages = 256;

/**
 * `host[:port]/repository[:tag]@sha256:<64 hex>`: a pin names content, never a tag that moves, and
 * carries its registry host (a node has no default registry).
 */
export const PinnedImageRef = z.string().superRefine((s, ctx) => {
  try {
    if (parseImageReference(s).digest === undefined)
      ctx.addIssue({ code: 'custom', message: `"${s}" names no digest (…@sha256:<64 hex>)` });
  } catch (error) {
    ctx.addIssue({ code: 'custom', message: (error as Error).message });
  }
});

export const PinnedImagesBody = z.strictObject({
  images: z
    .array(PinnedImageRef)
    .max(MaxPinnedImages, `at most ${String(MaxPinnedImages)} images`)
    .refine((list) => new Set(list).size === list.length, 'names an image twice'),
});
export type PinnedImagesBody = z.infer<typeof PinnedImagesBody>;

export const PinnedImagesAnswer = z.object({
  /** The images the machine keeps pinned, as last asked for. */
  pinned: z.array(z.string()),
  /** What this call unpinned (images this agent pinned before that the list no longer names). */
  unpinned: z.array(z.string()).optional(),
});
export type PinnedImagesAnswer = z.infer<typeof PinnedImagesAnswer>;
