// SPDX-License-Identifier: Apache-2.0
/** A typed client of the agent's image routes (`agent-images.ts`): what the operator calls. */
import { ImageRoutes, PinnedImagesAnswer, type PinnedImagesBody } from './agent-images.ts';
import { AgentPeer } from './agent-client.ts';
import { createTransport, getJson, putJson, type HttpFetch } from './http-client.ts';

/** The agent's image routes, typed. */
export interface ImagesAgentClient {
  readonly baseUrl: string;
  /** The images the machine keeps pinned, as last asked for. */
  pinnedImages(): Promise<PinnedImagesAnswer>;
  /** Keep exactly `body.images` pinned; resolves once each is pulled and pinned. */
  setPinnedImages(body: PinnedImagesBody): Promise<PinnedImagesAnswer>;
}

/** A client for the agent at `baseUrl` (`https://host:port`). */
export function createImagesAgentClient(options: {
  baseUrl: string;
  fetch: HttpFetch;
}): ImagesAgentClient {
  const t = createTransport({ ...options, peer: AgentPeer });
  return {
    baseUrl: t.baseUrl,
    pinnedImages: () => t.json(PinnedImagesAnswer, ImageRoutes.pinned, getJson),
    setPinnedImages: (body) => t.json(PinnedImagesAnswer, ImageRoutes.pinned, putJson(body)),
  };
}
