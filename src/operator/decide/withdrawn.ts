// SPDX-License-Identifier: Apache-2.0
/** Which Active rollouts a discovery scan pauses (docs/adr/0005 §4): their release is no longer theirs. */
import type { Release } from '../../core/releases/release.ts';
import type { Rollout } from '../../core/rollout/types.ts';
import type { DiscoveryInput } from './discovery.ts';
import { blockedBy } from '../../core/quoted-reasons.ts';

/** An Active rollout whose release is gone or withdrawn: paused, never guessed at. */
export interface Withdrawn {
  readonly rollout: string;
  readonly reason: string;
}

/**
 * Active rollouts to pause because their release was blocked for their pool, disappeared from the
 * repository, or is no longer an official release of the pool's channel (of some channel, for a
 * Cluster API update in a pool that follows none). A rollout that was
 * paused this way waits for a person: `molt rollout resume` if the release is meant to stay.
 */
export function withdrawnRollouts(
  i: Pick<DiscoveryInput, 'pools' | 'releases' | 'rollouts' | 'blocks'>,
): Withdrawn[] {
  const byDigest = new Map(i.releases.map((r) => [r.digest, r]));
  const pools = new Map(i.pools.map((p) => [p.name, p]));
  const out: Withdrawn[] = [];
  for (const r of i.rollouts) {
    if (r.state !== 'Active') continue;
    const release = byDigest.get(r.target.digest);
    const channel = pools.get(r.pool)?.channel;
    const block = i.blocks?.find(
      (b) => b.digest === r.target.digest && (b.pool === undefined || b.pool === r.pool),
    );
    if (block !== undefined)
      out.push({
        rollout: r.id,
        reason: `release ${r.target.version} was ${blockedBy(block.by, block.reason)}`,
      });
    else if (release === undefined)
      out.push({
        rollout: r.id,
        reason: `release ${r.target.version} (${r.target.digest}) disappeared from the repository`,
      });
    else {
      const reason = withdrawal(release, channel, r);
      if (reason !== undefined) out.push({ rollout: r.id, reason });
    }
  }
  return out;
}

/**
 * Why `release` is no longer one `r` may move to: for a pool following a channel, official in that
 * channel; for a Cluster API update's targeted rollout in a pool with none, official in some channel
 * (what `releaseCarrying` required of it). A rollback goes back to what the machines ran: never.
 */
function withdrawal(release: Release, channel: string | undefined, r: Rollout): string | undefined {
  if (channel !== undefined)
    return release.official && release.channels.includes(channel)
      ? undefined
      : `release ${r.target.version} was withdrawn from channel ${channel}`;
  if (r.only === undefined || r.rollbackOf !== undefined) return undefined;
  return release.official && release.channels.length > 0
    ? undefined
    : `release ${r.target.version} was withdrawn (${release.official ? 'in no channel' : 'not official'})`;
}
