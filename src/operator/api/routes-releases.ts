// SPDX-License-Identifier: Apache-2.0
/**
 * `GET /v1/releases/blocks`, `POST /v1/releases/{block,unblock}`: a person blocks a
 * release for one pool or every pool, and lifts blocks, the operator's own included (it blocks a
 * release for a pool when a rollout to it halts). Discovery never offers a blocked release, and a
 * rollout running towards one is paused on the next scan (`decide/discovery.ts`).
 *
 * A release is named by digest or version. To block, it must be one the registry lists or the
 * operator's rollouts name — a typo never becomes a block that matches nothing. Each change is a
 * `decision` history event naming who asked.
 */
import type { FastifyInstance } from 'fastify';
import { ErrorCode, MoltError } from '../../core/errors.ts';
import { iso } from '../../core/time.ts';
import { parseInput } from '../../platform/https/input.ts';
import {
  BlockRequestBody,
  OperatorRoutes,
  UnblockRequestBody,
  type BlockResult,
  type BlockView,
} from '../../protocol/operator.ts';
import type { ReleaseBlock, StoredState } from '../ports/store.ts';
import { recordTransition } from '../transitions/record.ts';
import type { OperatorApiDeps, RouteContext } from './context.ts';
import { blockedBy } from '../../core/quoted-reasons.ts';

/** A release as the operator knows it: from the registry, or named by one of its rollouts. */
interface Known {
  readonly digest: string;
  readonly version: string;
}

export const blockView = (b: ReleaseBlock): BlockView => ({
  digest: b.digest,
  ...(b.version !== undefined && { version: b.version }),
  ...(b.pool !== undefined && { pool: b.pool }),
  reason: b.reason,
  by: b.by,
  at: iso(b.at),
  ...(b.rollout !== undefined && { rollout: b.rollout }),
});

const isDigest = (ref: string): boolean => /^sha256:[0-9a-f]{64}$/.test(ref);

/** The registry's releases (when it answers) and every release a stored rollout names. */
async function knownReleases(deps: OperatorApiDeps, stored: StoredState): Promise<Known[]> {
  const fromStore = stored.rollouts.flatMap((r) => [r.target, ...(r.from ? [r.from] : [])]);
  let listed: readonly Known[] = [];
  let registryError: Error | undefined;
  try {
    listed = (await deps.releases?.()) ?? [];
  } catch (e) {
    // The rollouts' releases still resolve; only a registry-only release needs the registry.
    registryError = e instanceof Error ? e : new Error(String(e));
  }
  const known = [...listed, ...fromStore];
  if (known.length === 0 && registryError !== undefined) throw registryError;
  return known;
}

/** The one release `ref` names among `known`; `MOLT_UNKNOWN_RELEASE` or, for two, `MOLT_BAD_INPUT`. */
function resolve(ref: string, known: readonly Known[]): Known {
  const matches = new Map(
    known
      .filter((k) => (isDigest(ref) ? k.digest === ref : k.version === ref))
      .map((k) => [k.digest, k]),
  );
  const [only, ...others] = matches.values();
  if (only === undefined)
    throw new MoltError(ErrorCode.UnknownRelease, `no release ${ref} is known to the operator`, {
      hint: 'name it by digest (sha256:…) or version as `molt releases list` shows it',
    });
  if (others.length > 0)
    throw new MoltError(
      ErrorCode.BadInput,
      `version ${ref} names ${String(matches.size)} digests`,
      {
        hint: `block one by digest: ${[...matches.keys()].join(', ')}`,
      },
    );
  return only;
}

function checkPool(deps: OperatorApiDeps, pool: string | undefined): void {
  if (pool !== undefined && !deps.fleet.pools.some((p) => p.name === pool))
    throw new MoltError(ErrorCode.UnknownPool, `the operator has no pool ${pool}`, {
      hint: `pools: ${deps.fleet.pools.map((p) => p.name).join(', ')}`,
    });
}

const scope = (pool: string | undefined): string =>
  pool === undefined ? 'every pool' : `pool ${pool}`;

async function block(
  deps: OperatorApiDeps,
  by: string,
  body: BlockRequestBody,
): Promise<BlockResult> {
  checkPool(deps, body.pool);
  const stored = await deps.store.read();
  const release = resolve(body.release, await knownReleases(deps, stored));
  const at = deps.now();
  const b: ReleaseBlock = {
    digest: release.digest,
    version: release.version,
    ...(body.pool !== undefined && { pool: body.pool }),
    reason: body.reason,
    by,
    at,
  };
  const message = `release ${release.version} ${blockedBy(by, body.reason, scope(body.pool))}`;
  await recordTransition(deps, {
    write: (store) => store.putBlock(b),
    record: {
      event: {
        at,
        kind: 'decision',
        message,
        data: { action: 'block', by, digest: b.digest, ...(b.pool && { pool: b.pool }) },
      },
    },
  });
  return { blocks: [blockView(b)] };
}

/** The blocks `body` lifts: of the release (by digest or a block's version), for its pool or all. */
function toLift(stored: StoredState, body: UnblockRequestBody): ReleaseBlock[] {
  const ofRelease = stored.blocks.filter((b) =>
    isDigest(body.release) ? b.digest === body.release : b.version === body.release,
  );
  const lifted = ofRelease.filter((b) => body.pool === undefined || b.pool === body.pool);
  if (lifted.length > 0) return lifted;
  const where = ofRelease.map((b) => scope(b.pool)).join(', ');
  throw new MoltError(
    ErrorCode.NotBlocked,
    `release ${body.release} is not blocked for ${scope(body.pool)}`,
    {
      hint:
        where === ''
          ? 'list the blocked releases with `molt releases blocked`'
          : `it is blocked for ${where}: unblock that`,
    },
  );
}

async function unblock(
  deps: OperatorApiDeps,
  by: string,
  body: UnblockRequestBody,
): Promise<BlockResult> {
  checkPool(deps, body.pool);
  const lifted = toLift(await deps.store.read(), body);
  for (const b of lifted) {
    const message = `release ${b.version ?? b.digest} unblocked for ${scope(b.pool)} by ${by}`;
    await recordTransition(deps, {
      write: (store) => store.removeBlock(b.digest, b.pool),
      record: {
        event: {
          kind: 'decision',
          message,
          data: { action: 'unblock', by, digest: b.digest, ...(b.pool && { pool: b.pool }) },
        },
      },
    });
  }
  return { blocks: lifted.map(blockView) };
}

/** `GET /v1/releases/blocks` and the two actions. */
export function releaseRoutes(app: FastifyInstance, c: RouteContext): void {
  app.get(OperatorRoutes.blocks, async () => (await c.deps.store.read()).blocks.map(blockView));
  releaseActionRoutes(app, c);
}

/** `POST /v1/releases/{block,unblock}` (the dashboard's listener serves these too). */
export function releaseActionRoutes(app: FastifyInstance, c: RouteContext): void {
  const { deps } = c;
  app.post(OperatorRoutes.block, async (request) =>
    block(
      deps,
      c.who(request).name,
      parseInput(BlockRequestBody, request.body ?? {}, 'block request'),
    ),
  );
  app.post(OperatorRoutes.unblock, async (request) =>
    unblock(
      deps,
      c.who(request).name,
      parseInput(UnblockRequestBody, request.body ?? {}, 'unblock request'),
    ),
  );
}
