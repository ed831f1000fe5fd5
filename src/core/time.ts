// SPDX-License-Identifier: Apache-2.0
/**
 * Durations and instants as molt writes and reads them: durations like `90s`, `30m`, `2h`, `1d` or
 * `1h30m` (fleet files, operator configs, flags), instants as ISO 8601 with a zone. Pure: the
 * caller brings the clock.
 */

const units: readonly (readonly [string, number])[] = [
  ['d', 86_400_000],
  ['h', 3_600_000],
  ['m', 60_000],
  ['s', 1_000],
];
const durationRe = /^(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$/;

/**
 * The longest duration molt takes (100 years, `36525d`): every `now ± duration` stays a date.
 * Past a Date's range (±8.64e15 ms) croner threw a TypeError and the planner a RangeError.
 */
export const MAX_DURATION_MS = 36_525 * 86_400_000;

/**
 * Milliseconds of a duration like `90s`, `30m`, `2h`, `1d` or `1h30m`, at most
 * {@link MAX_DURATION_MS}; undefined for anything else.
 */
export function parseDuration(text: string): number | undefined {
  const m = durationRe.exec(text.trim());
  if (m === null || text.trim() === '') return undefined;
  const [, d = '0', h = '0', min = '0', s = '0'] = m;
  const ms = ((Number(d) * 24 + Number(h)) * 60 + Number(min)) * 60_000 + Number(s) * 1_000;
  return ms <= MAX_DURATION_MS ? ms : undefined;
}

/** A duration the way {@link parseDuration} reads it, largest units first: `1h20m`, `45s`, `0s`. */
export function formatDuration(ms: number): string {
  let rest = Math.round(Math.abs(ms) / 1000) * 1000;
  let text = '';
  for (const [unit, size] of units) {
    const n = Math.floor(rest / size);
    rest -= n * size;
    if (n > 0) text += `${n}${unit}`;
  }
  return (ms < 0 ? '-' : '') + (text === '' ? '0s' : text);
}

/** `1h30m`, `45s`, `250ms`: a duration for people (at most two units, not meant to be read back). */
export function humanDuration(ms: number): string {
  if (ms < 1_000) return `${Math.max(0, Math.round(ms))}ms`;
  const parts: string[] = [];
  let rest = ms;
  for (const [unit, size] of units) {
    const n = Math.floor(rest / size);
    if (n > 0 && parts.length < 2) parts.push(`${n}${unit}`);
    rest -= n * size;
  }
  return parts.join('');
}

const isoTime = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:\d{2})$/;

/** Epoch milliseconds of an ISO 8601 time with a zone (`Z` or `+01:00`); undefined otherwise. */
export function parseTime(text: string): number | undefined {
  const ms = isoTime.test(text) ? Date.parse(text) : NaN;
  return Number.isNaN(ms) ? undefined : ms;
}

/** An instant as ISO 8601 UTC. */
export const iso = (at: number): string => new Date(at).toISOString();

/**
 * An instant for people: ISO 8601 UTC to the second (`2026-11-29T00:11:14Z`). Messages, tables
 * and pages all write a time so; the API's fields keep {@link iso}'s milliseconds.
 */
export const instant = (at: number): string => iso(at).replace(/\.\d+Z$/, 'Z');

/** How far `at` is from `now`, for people: `in 5m`, `3h20m ago`, `now` (within a second). */
export function relative(at: number, now: number): string {
  const gap = at - now;
  if (Math.abs(gap) < 1_000) return 'now';
  const span = humanDuration(Math.abs(gap));
  return gap > 0 ? `in ${span}` : `${span} ago`;
}

/** `2026-11-29T00:11:14Z (in 5m)`: an instant and how far it is, the way a reader sees a time. */
export const when = (at: number, now: number): string => `${instant(at)} (${relative(at, now)})`;
