// SPDX-License-Identifier: Apache-2.0
/**
 * A person blocks a release for one pool or every pool, and lifts blocks, the operator's own
 * included (it blocks a release for a pool when a rollout to it halts). Discovery never offers a
 * blocked release, and a rollout running towards one is paused on the next scan
 * (`decide/discovery.ts`).
 *
 * A release is named by digest or version. To block, it must be one the registry lists or the
 * operator's rollouts name — a typo never becomes a block that matches nothing. Each change is a
 * `decision` history event naming who asked.
 */
import { ErrorCode, MoltError } from '../../core/errors.ts';
import { blockedBy } from '../../core/quoted-reasons.ts';
import type { ReleaseBlock, StoredState } from '../ports/store.ts';
import { recordTransition, type TransitionSink } from '../transitions/record.ts';

/** A release as the operator knows it: from the registry, or named by one of its rollouts. */
interface Known {
  readonly digest: string;
  readonly version: string;
}

export interface BlockDeps extends TransitionSink {
  /** The pools a block may name. */
  readonly fleet: { readonly pools: readonly { readonly name: string }[] };
  /** The registry's releases, to check what a person blocks names one; absent: rollouts' only. */
  readonly releases?: (() => Promise<readonly Known[]>) | undefined;
}

/** What a person asks to block or lift: a release by digest or version, for a pool or all. */
export interface BlockRequest {
  readonly release: string;
  readonly pool?: string | undefined;
}

const isDigest = (ref: string): boolean => /^sha256:[0-9a-f]{64}$/.test(ref);

/** The registry's releases (when it answers) and every release a stored rollout names. */
async function knownReleases(deps: BlockDeps, stored: StoredState): Promise<Known[]> {
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

function checkPool(deps: BlockDeps, pool: string | undefined): void {
  if (pool !== undefined && !deps.fleet.pools.some((p) => p.name === pool))
    throw new MoltError(ErrorCode.UnknownPool, `the operator has no pool ${pool}`, {
      hint: `pools: ${deps.fleet.pools.map((p) => p.name).join(', ')}`,
    });
}

const scope = (pool: string | undefined): string =>
  pool === undefined ? 'every pool' : `pool ${pool}`;

/** Block the release `a` names for its pool (or every pool); answers the block written. */
export async function blockRelease(
  deps: BlockDeps,
  by: string,
  a: BlockRequest & { readonly reason: string },
): Promise<ReleaseBlock> {
  checkPool(deps, a.pool);
  const stored = await deps.store.read();
  const release = resolve(a.release, await knownReleases(deps, stored));
  const at = deps.now();
  const b: ReleaseBlock = {
    digest: release.digest,
    version: release.version,
    ...(a.pool !== undefined && { pool: a.pool }),
    reason: a.reason,
    by,
    at,
  };
  const message = `release ${release.version} ${blockedBy(by, a.reason, scope(a.pool))}`;
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
  return b;
}

/** The blocks `a` lifts: of the release (by digest or a block's version), for its pool or all. */
function toLift(stored: StoredState, a: BlockRequest): ReleaseBlock[] {
  const ofRelease = stored.blocks.filter((b) =>
    isDigest(a.release) ? b.digest === a.release : b.version === a.release,
  );
  const lifted = ofRelease.filter((b) => a.pool === undefined || b.pool === a.pool);
  if (lifted.length > 0) return lifted;
  const where = ofRelease.map((b) => scope(b.pool)).join(', ');
  throw new MoltError(
    ErrorCode.NotBlocked,
    `release ${a.release} is not blocked for ${scope(a.pool)}`,
    {
      hint:
        where === ''
          ? 'list the blocked releases with `molt releases blocked`'
          : `it is blocked for ${where}: unblock that`,
    },
  );
}

/** Lift the blocks `a` names, each recorded; answers them. */
export async function unblockRelease(
  deps: BlockDeps,
  by: string,
  a: BlockRequest,
): Promise<readonly ReleaseBlock[]> {
  checkPool(deps, a.pool);
  const lifted = toLift(await deps.store.read(), a);
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
  return lifted;
}
