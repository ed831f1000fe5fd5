// SPDX-License-Identifier: Apache-2.0
/**
 * The agent's image routes (docs/adr/0015 §7, protocol/agent-images.ts): the images a Kubernetes
 * node keeps pinned in its container runtime. `GET` is open to every role; `PUT` needs `operate`
 * (the onRequest hook in routes.ts guards every non-GET: the operator and admins, never a node).
 * A machine without a node runtime answers `MOLT_NOT_KUBERNETES_NODE`.
 */
import type { FastifyInstance } from 'fastify';
import { ErrorCode, MoltError } from '../../core/errors.ts';
import { parseInput } from '../../platform/https/input.ts';
import { ImageRoutes, PinnedImagesBody } from '../../protocol/agent-images.ts';
import type { PinnedImages } from '../machine/pinned-images.ts';

export function registerImageRoutes(app: FastifyInstance, pinned: PinnedImages | undefined): void {
  const need = (): PinnedImages => {
    if (pinned !== undefined) return pinned;
    throw new MoltError(
      ErrorCode.NotKubernetesNode,
      'this machine runs no node runtime: it keeps no container images',
      { hint: 'pin images only on machines whose machine config has kubernetes.node' },
    );
  };
  app.get(ImageRoutes.pinned, () => need().current());
  app.put(ImageRoutes.pinned, async (request, reply) => {
    const images = need();
    const body = parseInput(PinnedImagesBody, request.body ?? {}, 'pinned images');
    // Pulls can take minutes: keep the socket while nothing is sent (as a component apply does).
    reply.raw.on('timeout', keepOpen);
    try {
      return await images.set(body.images);
    } finally {
      reply.raw.off('timeout', keepOpen);
    }
  });
}

function keepOpen(): void {
  // the pulls are still working; their answer will come
}
