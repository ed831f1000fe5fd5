// SPDX-License-Identifier: Apache-2.0
/**
 * Which rollouts a discovery pass starts (docs/adr/0005 §4): for each pool that follows a
 * channel, the newest eligible release (core's `selectLatest`: official, in the channel, signed
 * when required). A rollout is created once per (pool, release digest) — never again after it
 * completed, halted or was rolled back, so a halted rollout stays halted until a person acts —
 * and only when some machine of the pool runs another release. Pools that require approval get
 * their rollout in `AwaitingApproval`.
 */
import type { Release } from '../../core/releases/release.ts';
import { selectLatest } from '../../core/releases/select.ts';
import type { Machine, Pool, Rollout } from '../../core/rollout/types.ts';

export interface DiscoveryInput {
  readonly pools: readonly Pool[];
  readonly releases: readonly Release[];
  readonly rollouts: readonly Rollout[];
  readonly machines: readonly Machine[];
  readonly now: number;
  readonly requireSignature?: boolean;
}

export const rolloutId = (pool: string, r: Pick<Release, 'version' | 'digest'>): string =>
  `${pool}-${r.version}-${r.digest.slice(r.digest.indexOf(':') + 1, r.digest.indexOf(':') + 9)}`;

function newRollout(pool: Pool, release: Release, now: number): Rollout {
  return {
    id: rolloutId(pool.name, release),
    pool: pool.name,
    target: { version: release.version, digest: release.digest },
    state: pool.requireApproval === true ? 'AwaitingApproval' : 'Active',
    createdAt: now,
    machines: {},
  };
}

/** The rollouts to create now. */
export function rolloutsToCreate(i: DiscoveryInput): Rollout[] {
  const created: Rollout[] = [];
  for (const pool of i.pools) {
    if (pool.channel === undefined) continue;
    const selection = selectLatest({
      releases: i.releases,
      channel: pool.channel,
      requireSignature: i.requireSignature,
    });
    if (!selection.found) continue;
    const release = selection.release;
    const members = i.machines.filter((m) => m.pool === pool.name);
    if (members.every((m) => m.digest === release.digest)) continue;
    if (i.rollouts.some((r) => r.pool === pool.name && r.target.digest === release.digest))
      continue;
    // One rollout of a pool at a time: a newer release waits until the running one has ended.
    if (
      i.rollouts.some(
        (r) => r.pool === pool.name && r.state !== 'Completed' && r.state !== 'Halted',
      )
    )
      continue;
    created.push(newRollout(pool, release, i.now));
  }
  return created;
}
