// SPDX-License-Identifier: Apache-2.0
/**
 * Names a person types, matched against what the operator has: a machine's exact name (with near
 * matches when it has none such), a rollout by its id or a unique prefix of it (`workers-1.1`).
 */
import { ErrorCode, MoltError } from '../protocol/index.ts';

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

/** `name` itself when `names` has it, else MOLT_UNKNOWN_MACHINE with the near matches. */
export function requireMachine(name: string, names: readonly string[], where: string): string {
  if (names.includes(name)) return name;
  const near = nearMatches(name, names);
  const known = near.length > 0 ? `; did you mean ${near.join(', ')}?` : '';
  throw new MoltError(ErrorCode.UnknownMachine, `${where} manages no machine ${name}${known}`, {
    hint: 'list them with `molt machine list`',
  });
}

/**
 * The id `ids` has that is `id` or starts with it. None: MOLT_ROLLOUT_NOT_FOUND (with near
 * matches); several: MOLT_AMBIGUOUS_ID listing them.
 */
export function resolvePrefix(id: string, ids: readonly string[]): string {
  if (ids.includes(id)) return id;
  const matching = ids.filter((x) => x.startsWith(id));
  const [only] = matching;
  if (only !== undefined && matching.length === 1) return only;
  if (matching.length > 1)
    throw new MoltError(
      ErrorCode.AmbiguousId,
      `rollout ${id} is ambiguous: ${String(matching.length)} rollouts start with it: ${matching.join(', ')}`,
      { hint: 'give more of the id' },
    );
  const near = nearMatches(id, ids);
  throw new MoltError(
    ErrorCode.RolloutNotFound,
    `no rollout is ${id} or starts with it${near.length > 0 ? `; did you mean ${near.join(', ')}?` : ''}`,
    { hint: 'list them with `molt rollout list`' },
  );
}
