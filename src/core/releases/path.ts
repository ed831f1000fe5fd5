// SPDX-License-Identifier: Apache-2.0
/**
 * Upgrade paths. A release's `upgradeFrom` range says which app versions may upgrade *directly* to
 * it; when it excludes the current version the cluster must go through intermediate releases, as
 * Cincinnati clients follow graph edges (reference/oci-discovery.md §6.5). Here the graph is
 * implicit: a step u → v exists when v is newer than u and u's app version satisfies v's range.
 * Steps only go forward in version order, so the graph is acyclic and small (one node per eligible
 * release); quadratic search is fine.
 */
import type { Range } from 'semver';
import { ErrorCode, MoltError } from '../errors.ts';
import { compareVersions } from './order.ts';
import { parseRange } from './eligibility.ts';
import type { Release } from './release.ts';
import type { TagVersion } from './tag.ts';

/** An eligible release with its ordering key. */
export interface Node {
  readonly release: Release;
  readonly version: TagVersion;
}

/** What {@link findRoute} found: the path (empty when nothing is reachable) and the reachable set. */
export interface Route {
  /** Releases to install in order, ending with the target: the newest reachable release. */
  readonly path: readonly Release[];
  readonly reachable: ReadonlySet<Release>;
}

const START = -1;

/**
 * Finds the newest node reachable from `from` and the path to it with the fewest steps; among
 * equally short paths, the one whose first step is newest, then second, and so on (newer
 * intermediates carry more fixes). `nodes` must be sorted oldest first and all be newer than
 * `from`. Without `from` every node is reachable and the path is just the newest node.
 */
export function findRoute(nodes: readonly Node[], from: TagVersion | undefined): Route {
  const newest = nodes.at(-1);
  if (from === undefined || newest === undefined) {
    return {
      path: newest === undefined ? [] : [newest.release],
      reachable: new Set(nodes.map((n) => n.release)),
    };
  }
  const canStep = stepper(nodes, from);
  const reach = forwardReach(nodes.length, canStep);
  const reachable = new Set(nodes.filter((_, i) => reach[i]).map((n) => n.release));
  const target = reach.lastIndexOf(true);
  if (target === START) return { path: [], reachable };
  const hops = hopsTo(target, canStep);
  const path: Release[] = [];
  for (let u = START; u !== target;) {
    u = nextStep(u, target, hops, canStep);
    path.push((nodes[u] as Node).release);
  }
  return { path, reachable };
}

type CanStep = (from: number, to: number) => boolean;

/** A release's `upgradeFrom` range: undefined when it declares none, null when it is unparseable. */
const rangeOf = (r: Release): Range | null | undefined =>
  r.upgradeFrom === undefined ? undefined : parseRange(r.upgradeFrom);

/** No range admits every version; an unparseable one admits none (failing closed). */
const rangeAdmits = (range: Range | null | undefined, from: TagVersion): boolean =>
  range === undefined || (range?.test(from.app) ?? false);

/**
 * Whether `release`'s `upgradeFrom` range admits a direct upgrade from `from` — the test each step
 * of a path passes (a step also goes forward: `ineligibility`'s `NotNewer` checks that for one).
 */
export const admitsFrom = (release: Release, from: TagVersion): boolean =>
  rangeAdmits(rangeOf(release), from);

function stepper(nodes: readonly Node[], start: TagVersion): CanStep {
  const ranges = nodes.map((n) => rangeOf(n.release));
  const at = (i: number): TagVersion => (i === START ? start : (nodes[i] as Node).version);
  return (from, to) => rangeAdmits(ranges[to], at(from)) && compareVersions(at(from), at(to)) < 0;
}

function forwardReach(n: number, canStep: CanStep): boolean[] {
  const reach: boolean[] = [];
  for (let j = 0; j < n; j++) {
    reach.push(canStep(START, j) || reach.some((r, i) => r && canStep(i, j)));
  }
  return reach;
}

/** Fewest steps from each node (and from START, at key START) to `target`; Infinity if none. */
function hopsTo(target: number, canStep: CanStep): Map<number, number> {
  const hops = new Map<number, number>([[target, 0]]);
  for (let i = target - 1; i >= START; i--) {
    let best = Infinity;
    for (let j = i + 1; j <= target; j++) {
      const h = hops.get(j) ?? Infinity;
      if (h + 1 < best && canStep(i, j)) best = h + 1;
    }
    hops.set(i, best);
  }
  return hops;
}

/** The newest node one step closer to `target` than `u`. */
function nextStep(
  u: number,
  target: number,
  hops: ReadonlyMap<number, number>,
  canStep: CanStep,
): number {
  const want = (hops.get(u) ?? Infinity) - 1;
  for (let j = target; j > u; j--) {
    if (hops.get(j) === want && canStep(u, j)) return j;
  }
  // Unreachable: hopsTo gave u a finite count only through such a j.
  throw new MoltError(ErrorCode.Internal, `upgrade path search lost its way at node ${u}`);
}
