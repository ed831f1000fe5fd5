// SPDX-License-Identifier: Apache-2.0
/**
 * A condition an `ImagePolicy` object carries beside `Accepted` (`Following`, `GMImageMissing`):
 * only an object whose policy is in force (accepted now, or its last accepted spec kept) gets it —
 * an object the fleet file overrides, or one never accepted, says nothing about a policy not its.
 */
import type { ImagePolicy } from '../../core/images/types.ts';
import type { DeclaredVerdict, VerdictCondition } from '../ports/declared.ts';

/** `verdicts`, each one in force with `conditionOf(its policy)` appended (none when undefined). */
export function withPolicyCondition(
  verdicts: readonly DeclaredVerdict[],
  accepted: ReadonlyMap<string, ImagePolicy>,
  conditionOf: (policy: ImagePolicy) => VerdictCondition | undefined,
): DeclaredVerdict[] {
  return verdicts.map((v) => {
    const policy = v.reason === 'DefinedInFleetFile' ? undefined : accepted.get(v.name);
    const condition = policy && conditionOf(policy);
    return condition === undefined ? v : { ...v, conditions: [...(v.conditions ?? []), condition] };
  });
}
