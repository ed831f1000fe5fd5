// SPDX-License-Identifier: Apache-2.0
/**
 * Names a person types, matched against what the operator has: a machine's exact name (with near
 * matches when it has none such), a rollout by its id or a unique prefix of it (`workers-1.1`).
 */
import { ErrorCode, MoltError } from '../protocol/index.ts';
import { didYouMean } from '../core/near-matches.ts';

/** `name` itself when `names` has it, else MOLT_UNKNOWN_MACHINE with the near matches. */
export function requireMachine(name: string, names: readonly string[], where: string): string {
  if (names.includes(name)) return name;
  const known = didYouMean(name, names);
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
  throw new MoltError(
    ErrorCode.RolloutNotFound,
    `no rollout is ${id} or starts with it${didYouMean(id, ids)}`,
    { hint: 'list them with `molt rollout list`' },
  );
}
