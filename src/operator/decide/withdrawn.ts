// SPDX-License-Identifier: Apache-2.0
/** Which Active rollouts a discovery scan pauses (docs/adr/0005 §4): their release is no longer theirs. */
import type { DiscoveryInput } from './discovery.ts';

/** An Active rollout whose release is gone or withdrawn: paused, never guessed at (issue 4). */
export interface Withdrawn {
  readonly rollout: string;
  readonly reason: string;
}

/**
 * Active rollouts to pause because their release was blocked for their pool, disappeared from the
 * repository, or (for a pool following a channel) is no longer an official release of that channel. A rollout that was
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
        reason: `release ${r.target.version} was blocked by ${block.by}: ${block.reason}`,
      });
    else if (release === undefined)
      out.push({
        rollout: r.id,
        reason: `release ${r.target.version} (${r.target.digest}) disappeared from the repository`,
      });
    else if (channel !== undefined && (!release.official || !release.channels.includes(channel)))
      out.push({
        rollout: r.id,
        reason: `release ${r.target.version} was withdrawn from channel ${channel}`,
      });
  }
  return out;
}
