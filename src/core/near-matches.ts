// SPDX-License-Identifier: Apache-2.0
/** Names close to one a person typed: what a "did you mean …?" offers. */

/** Edit distance (insertions, deletions, substitutions) between `a` and `b`. */
export function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      row.push(
        Math.min((row[j - 1] ?? 0) + 1, (previous[j] ?? 0) + 1, (previous[j - 1] ?? 0) + cost),
      );
    }
    previous = row;
  }
  return previous[b.length] ?? 0;
}

/**
 * The candidates close to `name`, closest first, at most `max`: a few typos away (a third of its
 * length, at least 1), or containing it, or contained in it.
 */
export function nearMatches(name: string, candidates: readonly string[], max = 5): string[] {
  const allowed = Math.max(1, Math.floor(name.length / 3));
  const lower = name.toLowerCase();
  return candidates
    .map((c) => ({ c, d: editDistance(lower, c.toLowerCase()) }))
    .filter(
      ({ c, d }) =>
        d <= allowed || c.toLowerCase().includes(lower) || lower.includes(c.toLowerCase()),
    )
    .sort((x, y) => x.d - y.d || (x.c < y.c ? -1 : 1))
    .slice(0, max)
    .map(({ c }) => c);
}

/** `; did you mean a, b?` for the near matches of `name`, or '' when there is none. */
export function didYouMean(name: string, candidates: readonly string[]): string {
  const near = nearMatches(name, candidates);
  return near.length > 0 ? `; did you mean ${near.join(', ')}?` : '';
}
