// SPDX-License-Identifier: Apache-2.0
/**
 * When window policies allow starts over a span of time, as stretches `[from, to)`: what the
 * dashboard's timeline shades behind each pool's machines. Built on the same window arithmetic the
 * planner uses (windows.ts), so the shading and the planner's "waits for the window" never disagree.
 */
import { isAllowed, isWindowOpen, nextFire, nextOpening, windowCloses } from './windows.ts';
import type { WindowPolicy } from './windows.ts';

export interface Stretch {
  readonly from: number;
  readonly to: number;
}

/** Where an allowed stretch starting at `t` ends: the open windows close, or an exclusion opens. */
function allowedUntil(policy: WindowPolicy, t: number, until: number): number {
  let end = t;
  for (const w of policy.windows)
    if (isWindowOpen(w, t)) end = Math.max(end, windowCloses(w, t, until));
  for (const x of policy.exclusions ?? []) {
    const fire = nextFire(x, t);
    if (fire !== undefined) end = Math.min(end, fire);
  }
  return Math.min(Math.max(end, t + 1), until);
}

/** The stretches of `[from, to)` in which `policy` allows a start, in order, adjacent ones merged. */
export function allowedStretches(policy: WindowPolicy, from: number, to: number): Stretch[] {
  const out: Stretch[] = [];
  let t = from;
  while (t < to) {
    if (!isAllowed(policy, t)) {
      const opening = nextOpening(policy, t, to - t);
      if (opening === undefined || opening.at >= to) break;
      t = opening.at;
    }
    const end = allowedUntil(policy, t, to);
    const last = out.at(-1);
    if (last?.to === t) out[out.length - 1] = { from: last.from, to: end };
    else out.push({ from: t, to: end });
    t = end;
  }
  return out;
}

/** The stretches in both lists (every window policy that applies must allow a start). */
export function intersect(a: readonly Stretch[], b: readonly Stretch[]): Stretch[] {
  const out: Stretch[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const x = a[i] as Stretch;
    const y = b[j] as Stretch;
    const from = Math.max(x.from, y.from);
    const to = Math.min(x.to, y.to);
    if (from < to) out.push({ from, to });
    if (x.to < y.to) i++;
    else j++;
  }
  return out;
}

/** Where all of `policies` allow a start within `[from, to)`; undefined when there are none. */
export function windowStretches(
  policies: readonly WindowPolicy[],
  from: number,
  to: number,
): Stretch[] | undefined {
  if (policies.length === 0) return undefined;
  return policies.map((p) => allowedStretches(p, from, to)).reduce((acc, s) => intersect(acc, s));
}
