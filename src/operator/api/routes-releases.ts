// SPDX-License-Identifier: Apache-2.0
/**
 * `GET /v1/releases/blocks`, `POST /v1/releases/{block,unblock}`: parsed, authorised and answered
 * here; the rules of a block are `../actions/blocks.ts`.
 */
import type { FastifyInstance } from 'fastify';
import { iso } from '../../core/time.ts';
import { parseInput } from '../../platform/https/input.ts';
import {
  BlockRequestBody,
  OperatorRoutes,
  UnblockRequestBody,
  type BlockView,
} from '../../protocol/operator.ts';
import { blockRelease, unblockRelease } from '../actions/blocks.ts';
import type { ReleaseBlock } from '../ports/store.ts';
import type { RouteContext } from './context.ts';

export const blockView = (b: ReleaseBlock): BlockView => ({
  digest: b.digest,
  ...(b.version !== undefined && { version: b.version }),
  ...(b.pool !== undefined && { pool: b.pool }),
  reason: b.reason,
  by: b.by,
  at: iso(b.at),
  ...(b.rollout !== undefined && { rollout: b.rollout }),
});

/** `GET /v1/releases/blocks` and the two actions. */
export function releaseRoutes(app: FastifyInstance, c: RouteContext): void {
  app.get(OperatorRoutes.blocks, async () => (await c.deps.store.read()).blocks.map(blockView));
  releaseActionRoutes(app, c);
}

/** `POST /v1/releases/{block,unblock}` (the dashboard's listener serves these too). */
export function releaseActionRoutes(app: FastifyInstance, c: RouteContext): void {
  const { deps } = c;
  app.post(OperatorRoutes.block, async (request) => {
    const body = parseInput(BlockRequestBody, request.body ?? {}, 'block request');
    return { blocks: [blockView(await blockRelease(deps, c.who(request).name, body))] };
  });
  app.post(OperatorRoutes.unblock, async (request) => {
    const body = parseInput(UnblockRequestBody, request.body ?? {}, 'unblock request');
    return { blocks: (await unblockRelease(deps, c.who(request).name, body)).map(blockView) };
  });
}
