// SPDX-License-Identifier: Apache-2.0
/**
 * Where each pool goes next and why the newer releases are not taken: what discovery
 * (`discovery.ts`) would choose — the next step of the path from the pool's oldest release, or the
 * promoted release — with every release above the pool's current one that it passes over and the
 * reason: blocked, not reachable through `upgrade-from`, Kubernetes range, channel, signature, or
 * a minimum release age still running. `GET /v1/plan` answers it as `releases`.
 */
import { iso } from '../../core/time.ts';
import type { Pool } from '../../core/rollout/types.ts';
import type { ReleaseBlock } from '../ports/store.ts';
import {
  blockedFor,
  channelSelection,
  nextStep,
  promoted,
  soakedAt,
  type DiscoveryInput,
} from './discovery.ts';
import { blockedBy } from '../../core/quoted-reasons.ts';

export interface NotTaken {
  readonly version: string;
  readonly digest: string;
  /** `Blocked`, or a release selection code (`NotReachable`, `KubernetesIncompatible`, …). */
  readonly code: string;
  readonly reason: string;
}

export interface PoolReleases {
  readonly pool: string;
  /** The oldest release the pool's unpinned machines run: where its paths start. */
  readonly current?: string;
  /** The release it moves to next; `path` when that is a step on a longer walk. */
  readonly next?: {
    readonly version: string;
    readonly digest: string;
    readonly path?: string[];
    /** When a minimum release age lets it start (ISO), if it has not yet. */
    readonly notBefore?: string;
  };
  readonly notTaken: NotTaken[];
  /** Why no release is offered, when none is. */
  readonly none?: string;
}

const blockedReason = (b: ReleaseBlock): string => blockedBy(b.by, b.reason);

function channelPool(pool: Pool & { channel: string }, i: DiscoveryInput): PoolReleases {
  const blocked = blockedFor(pool.name, i.blocks);
  const blocks = (i.blocks ?? []).filter((b) => blocked.has(b.digest));
  const notTaken: NotTaken[] = i.releases.flatMap((r) => {
    const b = blocks.find((x) => x.digest === r.digest);
    return b === undefined
      ? []
      : [{ version: r.version, digest: r.digest, code: 'Blocked', reason: blockedReason(b) }];
  });
  const { current, selection } = channelSelection(pool, i);
  for (const r of selection.rejected)
    if (r.code !== 'NotNewer' && r.code !== 'Superseded')
      notTaken.push({ version: r.version, digest: r.digest, code: r.code, reason: r.reason });
  const base = { pool: pool.name, ...(current !== undefined && { current }), notTaken };
  if (!selection.found) return { ...base, none: selection.reason };
  const next = nextStep(selection);
  const notBefore = soakedAt(pool, next.digest, i);
  return {
    ...base,
    next: {
      version: next.version,
      digest: next.digest,
      ...(next.path !== undefined && { path: [...next.path] }),
      ...(notBefore !== undefined && { notBefore: iso(notBefore) }),
    },
  };
}

/** Each pool's next release and the releases it passes over, on what discovery last saw. */
export function poolReleases(i: DiscoveryInput): PoolReleases[] {
  return i.pools.map((pool) => {
    if (pool.channel !== undefined) return channelPool({ ...pool, channel: pool.channel }, i);
    const from = pool.promoteFrom;
    if (from === undefined)
      return { pool: pool.name, notTaken: [], none: 'the pool follows no channel and no pool' };
    const done = promoted(from, i.rollouts);
    if (done === undefined)
      return {
        pool: pool.name,
        notTaken: [],
        none: `pool ${from} completed no rollout yet`,
      };
    const b = (i.blocks ?? []).find(
      (x) => x.digest === done.digest && (x.pool === undefined || x.pool === pool.name),
    );
    return b === undefined
      ? { pool: pool.name, notTaken: [], next: { version: done.version, digest: done.digest } }
      : {
          pool: pool.name,
          notTaken: [
            {
              version: done.version,
              digest: done.digest,
              code: 'Blocked',
              reason: blockedReason(b),
            },
          ],
          none: `the release ${from} completed is blocked for this pool`,
        };
  });
}
