// SPDX-License-Identifier: Apache-2.0
/**
 * The operator API's blocked releases (routes in operator.ts): a release blocked for a
 * pool, or for every pool, is never offered to it again, and a rollout already running towards it
 * is paused. The operator blocks a release for a pool itself when a rollout to it halts; a person
 * blocks and unblocks with `molt releases block|unblock`.
 */
import { z } from 'zod';

/** A release by digest (`sha256:…`) or by its version (`1.2.0`), as the registry lists it. */
const releaseRef = z.string().trim().min(1, 'name a release by digest or version').max(200);
const poolName = z.string().min(1).max(200);

/** `POST /v1/releases/block`. */
export const BlockRequestBody = z.strictObject({
  release: releaseRef,
  /** Absent: every pool. */
  pool: poolName.optional(),
  reason: z.string().trim().min(1, 'say why').max(500),
});
export type BlockRequestBody = z.infer<typeof BlockRequestBody>;

/**
 * `POST /v1/releases/unblock`: lifts the block for `pool`, or every block of the release when no
 * pool is named. Nothing to lift is `MOLT_NOT_BLOCKED`.
 */
export const UnblockRequestBody = z.strictObject({
  release: releaseRef,
  pool: poolName.optional(),
});
export type UnblockRequestBody = z.infer<typeof UnblockRequestBody>;

/** A blocked release. */
export const BlockView = z.object({
  digest: z.string(),
  version: z.string().optional(),
  /** Absent: blocked for every pool. */
  pool: z.string().optional(),
  reason: z.string(),
  /** A person's certificate name, or `operator` when a rollout to it halted. */
  by: z.string(),
  at: z.string(),
  /** The halted rollout that blocked it. */
  rollout: z.string().optional(),
});
export type BlockView = z.infer<typeof BlockView>;

/** Answer of block and unblock: the blocks the request made or lifted. */
export const BlockResult = z.object({ blocks: BlockView.array() });
export type BlockResult = z.infer<typeof BlockResult>;
