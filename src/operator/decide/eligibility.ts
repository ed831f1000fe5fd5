// SPDX-License-Identifier: Apache-2.0
/**
 * Which releases a pool may move to — discovery's eligibility, in one place, for every path that
 * chooses a release (docs/adr/0005 §4, docs/adr/0014 decision 3): not blocked for the pool
 * (`ReleaseBlock`), then core's checks — in the pool's channel (a pool with none: in some
 * channel), official, the Kubernetes range, the signature verdict (signed when the operator
 * requires it), newer than where the machines start and reachable from there through
 * `upgrade-from` ranges. Discovery selects among all releases (a path may take several steps);
 * a Cluster API update moves one machine in one step, so it asks {@link releaseVerdict}.
 */
import { compareVersions } from '../../core/releases/order.ts';
import type { Release } from '../../core/releases/release.ts';
import { directVerdict, selectLatest, type Selection } from '../../core/releases/select.ts';
import { parseTag, type TagVersion } from '../../core/releases/tag.ts';
import type { Pool } from '../../core/rollout/types.ts';
import type { ReleaseBlock } from '../ports/store.ts';
import { blockedBy } from '../../core/quoted-reasons.ts';

/** What a pool's releases are checked against. */
export interface ReleaseRules {
  readonly pool: Pool;
  /** The release the machines start from (a tag or version); undefined: every release is reachable. */
  readonly current: string | undefined;
  /** The cluster's Kubernetes version; undefined: release ranges are not checked. */
  readonly kubernetes?: string | undefined;
  readonly requireSignature?: boolean | undefined;
  readonly blocks?: readonly ReleaseBlock[] | undefined;
}

/** Why a release may not be taken: `Blocked`, or a core rejection code. */
export interface Refusal {
  readonly code: string;
  readonly reason: string;
}

/** The digests blocked for `pool`: its own blocks and those for every pool. */
export function blockedFor(pool: string, blocks: readonly ReleaseBlock[] = []): Set<string> {
  return new Set(
    blocks.filter((b) => b.pool === undefined || b.pool === pool).map((b) => b.digest),
  );
}

const criteria = (rules: ReleaseRules) => ({
  channel: rules.pool.channel,
  current: rules.current,
  kubernetes: rules.kubernetes,
  requireSignature: rules.requireSignature,
});

/** The newest eligible release a channel pool reaches from `rules.current`, and the path there. */
export function selection(
  releases: readonly Release[],
  rules: ReleaseRules & { readonly pool: { readonly channel: string } },
): Selection {
  const blocked = blockedFor(rules.pool.name, rules.blocks);
  return selectLatest({
    ...criteria(rules),
    channel: rules.pool.channel,
    releases: releases.filter((r) => !blocked.has(r.digest)),
  });
}

/** Whether `release` may be taken in one step from `rules.current`; undefined when it may. */
export function releaseVerdict(release: Release, rules: ReleaseRules): Refusal | undefined {
  const block = rules.blocks?.find(
    (b) => b.digest === release.digest && (b.pool === undefined || b.pool === rules.pool.name),
  );
  if (block !== undefined) return { code: 'Blocked', reason: blockedBy(block.by, block.reason) };
  return directVerdict(release, criteria(rules));
}

/** What a machine's agent reported booting (a planner `Machine` is one). */
export interface Running {
  readonly digest?: string | undefined;
  readonly version?: string | undefined;
}

/**
 * The release a machine runs, as discovery reads it: the release of its digest, else the version
 * its agent reported. Undefined when its digest is not known (its agent has not answered).
 */
export function runningRelease(m: Running, releases: readonly Release[]): TagVersion | undefined {
  if (m.digest === undefined) return undefined;
  const tag = releases.find((r) => r.digest === m.digest)?.tag ?? m.version;
  const parsed = tag === undefined ? undefined : parseTag(tag);
  return parsed?.ok === true ? parsed.version : undefined;
}

/** The oldest release `machines` run (those whose release is known): where their paths start. */
export function oldestRunning(
  machines: readonly Running[],
  releases: readonly Release[],
): TagVersion | undefined {
  let oldest: TagVersion | undefined;
  for (const m of machines) {
    const v = runningRelease(m, releases);
    if (v !== undefined && (oldest === undefined || compareVersions(v, oldest) < 0)) oldest = v;
  }
  return oldest;
}
