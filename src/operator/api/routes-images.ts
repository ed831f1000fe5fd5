// SPDX-License-Identifier: Apache-2.0
/**
 * `GET /v1/images` (docs/adr/0013): every image policy's units — what each followed container
 * runs and what it would move to (`images/observe.ts`), from the cluster's workloads and the
 * repositories' tags as read at most 10 s ago (`read-every.ts`); `GET /v1/images/plan`: the
 * image driver's last plan (`image-plan.ts`). Any fleet identity may read them. An operator that
 * follows no images (its config reads no cluster) answers MOLT_BAD_INPUT.
 */
import type { FastifyInstance } from 'fastify';
import { ErrorCode, MoltError } from '../../core/errors.ts';
import { ImagesOperatorRoutes } from '../../protocol/operator-images.ts';
import { observeImages, type ImagesDeps } from '../images/observe.ts';
import { imagePlanView } from './image-plan.ts';
import { withImagesEvery } from './read-every.ts';
import type { OperatorStore } from '../ports/store.ts';

function followed(images: ImagesDeps | undefined): ImagesDeps {
  if (images === undefined)
    throw new MoltError(ErrorCode.BadInput, 'this operator follows no images', {
      hint: 'image policies need the operator config’s `kubernetes` section (a cluster to read workloads from) and `images:` in the fleet file or ImagePolicy objects',
    });
  return images;
}

export function imageRoutes(
  app: FastifyInstance,
  images: ImagesDeps | undefined,
  o: { readonly isLeader: () => boolean; readonly store: OperatorStore },
): void {
  const { isLeader } = o;
  const reads = images === undefined ? undefined : withImagesEvery(images);
  app.get(ImagesOperatorRoutes.list, async () =>
    observeImages(followed(reads), (await o.store.read()).rollouts),
  );
  app.get(ImagesOperatorRoutes.plan, () =>
    Promise.resolve(imagePlanView(followed(images).lastPlan?.last(), isLeader())),
  );
}
