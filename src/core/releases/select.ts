// SPDX-License-Identifier: Apache-2.0
/**
 * Choosing the release a cluster should move to: the newest release that is official, in the
 * channel, compatible with the cluster's Kubernetes version, signed when signatures are required,
 * newer than the current version, and reachable from it through `upgradeFrom` ranges. "Nothing
 * eligible" is a value, not an exception (the CLI maps it to exit code 3).
 */
import { ErrorCode } from '../errors.ts';
import { parseChannel } from './channel.ts';
import { didYouMean } from '../near-matches.ts';
import { ineligibility, parseKubernetesVersion, RejectionCode } from './eligibility.ts';
import type { Criteria, Verdict } from './eligibility.ts';
import { compareVersions, releaseVersion, sortReleases } from './order.ts';
import { admitsFrom, findRoute } from './path.ts';
import type { Node, Route } from './path.ts';
import type { Release } from './release.ts';
import { parseVersion } from './tag.ts';

/** What {@link selectLatest} needs. Strings are validated; garbage throws a `MoltError`. */
export interface SelectOptions {
  readonly releases: readonly Release[];
  /** Channel name; trimmed and lowercased (`MOLT_INVALID_CHANNEL` when malformed). */
  readonly channel: string;
  /** Version the cluster runs (`1.8.0`, `1.8.0-rev2`, `v1.8.0`); absent = every release is reachable. */
  readonly current?: string | undefined;
  /** Cluster Kubernetes version (`v1.31.2`); absent = the Kubernetes range is not checked. */
  readonly kubernetes?: string | undefined;
  /** Reject releases whose signature is not verified. An invalid signature is always rejected. */
  readonly requireSignature?: boolean | undefined;
}

/** A release that was not chosen, and why. Same shape as the CLI's `RejectionView`. */
export interface Rejection {
  readonly version: string;
  readonly tag: string;
  readonly digest: string;
  readonly code: RejectionCode;
  readonly reason: string;
}

/**
 * The outcome. `rejected` lists, newest first, every release at or above the current version
 * (every release when no current is given) that is neither chosen nor on the path; older releases
 * are left out as noise.
 */
export type Selection =
  | {
      readonly found: true;
      readonly release: Release;
      /** Releases to install in order, ending with `release`; `[release]` for a direct upgrade. */
      readonly path: readonly Release[];
      readonly rejected: readonly Rejection[];
    }
  | {
      readonly found: false;
      readonly code: typeof ErrorCode.NoEligibleRelease;
      readonly reason: string;
      readonly rejected: readonly Rejection[];
    };

/** Picks the newest eligible, reachable release; see {@link Selection}. */
export function selectLatest(options: SelectOptions): Selection {
  const criteria = { ...criteriaOf(options), channel: parseChannel(options.channel) };
  const newestFirst = sortReleases(options.releases).map((release) => ({
    release,
    version: releaseVersion(release),
  }));
  const verdicts = new Map<Release, Verdict | undefined>(
    newestFirst.map((n) => [n.release, ineligibility(n.release, n.version, criteria)]),
  );
  const eligible = newestFirst.filter((n) => verdicts.get(n.release) === undefined).reverse();
  const route = findRoute(eligible, criteria.current);
  const rejected = rejections(newestFirst, { criteria, verdicts, route });
  const release = route.path.at(-1);
  if (release === undefined) {
    return {
      found: false,
      code: ErrorCode.NoEligibleRelease,
      reason:
        nothingReason(criteria, eligible.length) +
        unknownChannel(criteria.channel, options.releases),
      rejected,
    };
  }
  return { found: true, release, path: route.path, rejected };
}

/**
 * What {@link directVerdict} needs: {@link SelectOptions} for one release, and `channel` may be
 * left out (any channel, but at least one).
 */
export type DirectOptions = Omit<SelectOptions, 'releases' | 'channel'> & {
  readonly channel?: string | undefined;
};

/**
 * Whether `release` may be installed directly — one step, no path — on a cluster at
 * `options.current`: the checks {@link selectLatest} applies to each release, then its
 * `upgradeFrom` range admitting the current version, as a path's first step must. The first check
 * it fails, or undefined when it may. With no current version, every release is reachable.
 */
export function directVerdict(release: Release, options: DirectOptions): Verdict | undefined {
  const criteria = criteriaOf(options);
  const verdict = ineligibility(release, releaseVersion(release), criteria);
  const from = criteria.current;
  if (verdict !== undefined || from === undefined || admitsFrom(release, from)) return verdict;
  return {
    code: RejectionCode.NotReachable,
    reason: `its upgrade-from range ${release.upgradeFrom ?? '*'} excludes ${from.tag}`,
  };
}

function criteriaOf(o: DirectOptions): Criteria {
  return {
    channel: o.channel === undefined ? undefined : parseChannel(o.channel),
    current: o.current === undefined ? undefined : parseVersion(o.current, 'current version'),
    kubernetes: o.kubernetes === undefined ? undefined : parseKubernetesVersion(o.kubernetes),
    requireSignature: o.requireSignature ?? false,
  };
}

interface Findings {
  readonly criteria: Criteria;
  readonly verdicts: ReadonlyMap<Release, Verdict | undefined>;
  readonly route: Route;
}

function rejections(newestFirst: readonly Node[], v: Findings): Rejection[] {
  const { current } = v.criteria;
  const chosen = v.route.path.at(-1);
  return newestFirst
    .filter((n) => current === undefined || compareVersions(n.version, current) >= 0)
    .filter((n) => !v.route.path.includes(n.release))
    .map((n) => {
      const verdict = v.verdicts.get(n.release) ?? eligibleVerdict(n.release, chosen, v);
      const { version, tag, digest } = n.release;
      return { version, tag, digest, ...verdict };
    });
}

/** Why an eligible release lost: it is unreachable, or something newer (or equal) was chosen. */
function eligibleVerdict(r: Release, chosen: Release | undefined, v: Findings): Verdict {
  if (chosen === undefined || !v.route.reachable.has(r)) {
    const from = v.criteria.current?.tag ?? 'the current version';
    return {
      code: RejectionCode.NotReachable,
      reason: `its upgrade-from range ${r.upgradeFrom ?? '*'} excludes ${from} and no eligible release leads there`,
    };
  }
  return {
    code: RejectionCode.Superseded,
    reason: `${chosen.version} (${chosen.tag}) was selected instead`,
  };
}

/**
 * When no release at all is in `channel`: the channels there are, and the near ones, so a typo
 * (`stabel`) reads as one rather than as an empty channel.
 */
function unknownChannel(channel: string, releases: readonly Release[]): string {
  const channels = [...new Set(releases.flatMap((r) => r.channels))].sort();
  if (channels.includes(channel)) return '';
  const known =
    channels.length > 0 ? `channels here: ${channels.join(', ')}` : 'no release has a channel';
  return `; no release is in channel ${channel} (${known})${didYouMean(channel, channels)}`;
}

function nothingReason(c: Criteria & { channel: string }, eligibleCount: number): string {
  if (eligibleCount > 0 && c.current !== undefined) {
    return `no eligible release in channel ${c.channel} can be reached from ${c.current.tag}`;
  }
  const newer = c.current === undefined ? '' : ` newer than ${c.current.tag}`;
  return `no release in channel ${c.channel}${newer} is eligible`;
}
