// SPDX-License-Identifier: Apache-2.0
/**
 * Maintenance windows (ADR 0005 §3). A window opens at each fire time of its cron expression (read
 * in its time zone by croner) and stays open `durationMs`: it is open at `t` iff some fire lies in
 * `(t − duration, t]`, i.e. iff the first fire strictly after `t − duration` is ≤ `t`, so a window
 * is open on `[fire, fire + duration)`. A window policy allows a start when some window is open and
 * no exclusion is. DST behaviour is croner's (pinned by windows.test.ts). Compiled crons are cached
 * per window object; a croner call costs ~40 µs, so callers evaluate a policy once per plan.
 */
import { Cron } from 'croner';
import type { Window } from './types.ts';
import { instant } from '../time.ts';

/** The part of a window policy that windows.ts reads. */
export interface WindowPolicy {
  readonly windows: readonly Window[];
  readonly exclusions?: readonly Window[] | undefined;
}

/** How far {@link nextOpening} looks ahead by default. */
export const OPENING_HORIZON_MS = 366 * 24 * 3_600_000;

const compiled = new WeakMap<Window, Cron>();

/** The cron of `w`, compiled once per window object. Throws croner's error for a bad pattern. */
export function cronOf(w: Window): Cron {
  let cron = compiled.get(w);
  if (cron === undefined) {
    cron = new Cron(w.cron, { paused: true, timezone: w.timeZone ?? 'UTC' });
    compiled.set(w, cron);
  }
  return cron;
}

/** First fire strictly after `t` (undefined: the pattern never fires again). */
export function nextFire(w: Window, t: number): number | undefined {
  return cronOf(w).nextRun(new Date(t))?.getTime();
}

/** Whether `w` is open at `t`: a fire in `(t − duration, t]`. */
export function isWindowOpen(w: Window, t: number): boolean {
  const fire = nextFire(w, t - w.durationMs);
  return fire !== undefined && fire <= t;
}

/**
 * When the occurrence(s) of `w` open at `t` close: the first instant ≥ t with no fire in its
 * window; or the first instant past `until` up to which `w` is known to be open. The search is
 * bounded in time, not in calls, so its answer depends on `t` alone (plans stay deterministic);
 * validation refuses exclusions that never close, which would make it walk every fire.
 */
export function windowCloses(w: Window, t: number, until = Infinity): number {
  let end = t;
  while (end <= until && isWindowOpen(w, end)) {
    // The latest fire ≤ end decides when this stretch ends; overlapping occurrences extend it.
    const last =
      cronOf(w)
        .previousRuns(1, new Date(end + 1))[0]
        ?.getTime() ?? end;
    end = last + w.durationMs;
  }
  return end;
}

/** Whether the policy allows a start at `t`: some window open and no exclusion open. */
export function isAllowed(policy: WindowPolicy, t: number): boolean {
  return (
    policy.windows.some((w) => isWindowOpen(w, t)) &&
    !(policy.exclusions ?? []).some((w) => isWindowOpen(w, t))
  );
}

/** An opening: when, and a window open then (its zone is shown to people). */
export interface Opening {
  readonly at: number;
  readonly window: Window;
}

/**
 * A stretch the policy is known to be closed on: `[from, to)`, with the opening at `to` when one was
 * found. Plans move forward in time (reconciles, simulate), so a later question usually falls inside
 * the stretch and costs no croner call at all; a policy that never opens is searched once, then
 * only extended. These are facts about a pure function, so the memo never changes an answer.
 */
interface ClosedSpan {
  readonly from: number;
  readonly to: number;
  readonly opening: Opening | undefined;
}
const closedSpans = new WeakMap<WindowPolicy, ClosedSpan>();

/**
 * The earliest time ≥ `t` at which the policy allows a start, or undefined when there is none
 * before `t + horizonMs`.
 */
export function nextOpening(
  policy: WindowPolicy,
  t: number,
  horizonMs: number = OPENING_HORIZON_MS,
): Opening | undefined {
  const span = closedSpans.get(policy);
  const known = span !== undefined && span.from <= t && t <= span.to;
  if (known && span.opening !== undefined) {
    return span.opening.at <= t + horizonMs ? span.opening : undefined;
  }
  const found = search(policy, known ? span.to : t, t + horizonMs);
  closedSpans.set(policy, { from: known ? span.from : t, to: found.at, opening: found.opening });
  return found.opening;
}

/** Whether the policy allows a start at `t`, answered from the known closed stretch when possible. */
export function allowedAt(policy: WindowPolicy, t: number): boolean {
  const span = closedSpans.get(policy);
  if (span !== undefined && span.from <= t && t < span.to) return false;
  return isAllowed(policy, t);
}

/**
 * Steps from one candidate instant to the next: the next window fire while no window is open, the
 * end of the open exclusions while one is; taking the later of the two never skips an allowed
 * instant (before the next fire no window is open; before the exclusion ends it is open). Returns
 * the opening, or how far the policy is known to be closed.
 */
function search(
  policy: WindowPolicy,
  from: number,
  until: number,
): { readonly at: number; readonly opening: Opening | undefined } {
  let at = from;
  while (at <= until) {
    const open = policy.windows.find((w) => isWindowOpen(w, at));
    const excluded = (policy.exclusions ?? []).filter((w) => isWindowOpen(w, at));
    if (open !== undefined && excluded.length === 0) return { at, opening: { at, window: open } };
    let next = at;
    if (open === undefined) {
      const fire = earliestFire(policy.windows, at);
      if (fire === undefined) return { at: Infinity, opening: undefined };
      next = fire;
    }
    for (const w of excluded) next = Math.max(next, windowCloses(w, at, until));
    at = next;
  }
  return { at, opening: undefined };
}

function earliestFire(windows: readonly Window[], t: number): number | undefined {
  let best: number | undefined;
  for (const w of windows) {
    const f = nextFire(w, t);
    if (f !== undefined && (best === undefined || f < best)) best = f;
  }
  return best;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

/** `2026-11-24T02:00:00Z (Europe/Berlin 03:00)`: an instant as UTC and as the window's local time. */
export function describeInstant(at: number, timeZone: string | undefined): string {
  const iso = instant(at);
  if (timeZone === undefined || timeZone === 'UTC') return iso;
  let fmt = formatters.get(timeZone);
  if (fmt === undefined) {
    fmt = new Intl.DateTimeFormat('en-GB', {
      timeZone,
      hour: '2-digit',
      minute: '2-digit',
      hourCycle: 'h23',
    });
    formatters.set(timeZone, fmt);
  }
  return `${iso} (${timeZone} ${fmt.format(at)})`;
}
