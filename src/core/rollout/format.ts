// SPDX-License-Identifier: Apache-2.0
/** Small formatting helpers for the sentences in plan decisions. */

const UNITS: readonly (readonly [string, number])[] = [
  ['d', 86_400_000],
  ['h', 3_600_000],
  ['m', 60_000],
  ['s', 1_000],
];

/** `1h30m`, `45s`, `250ms`: a duration for people (at most two units). */
export function formatDuration(ms: number): string {
  if (ms < 1_000) return `${Math.max(0, Math.round(ms))}ms`;
  const parts: string[] = [];
  let rest = ms;
  for (const [unit, size] of UNITS) {
    const n = Math.floor(rest / size);
    if (n > 0 && parts.length < 2) parts.push(`${n}${unit}`);
    rest -= n * size;
  }
  return parts.join('');
}

/** An instant as ISO 8601 UTC. */
export const iso = (at: number): string => new Date(at).toISOString();

/** `1 machine`, `3 machines`. */
export const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;
