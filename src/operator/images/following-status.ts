// SPDX-License-Identifier: Apache-2.0
/**
 * Whether an image policy follows anything (docs/adr/0013 decision 1, "bad input"): the `Following`
 * condition of an `ImagePolicy` object, from the image driver's last selection. A policy that
 * selects nothing, or a container two policies select (neither takes it), is said on the object —
 * `kubectl get imagepolicies` shows it — instead of the policy quietly doing nothing.
 *
 * - True `Selected`: how many containers of how many workloads it follows.
 * - False `Conflict`: `MOLT_IMAGE_POLICY_CONFLICT`, each container another policy selects too.
 * - False `SelectsNothing`: no container of the workloads it names runs its repository.
 * - Unknown `NotReadYet`: no driver pass yet (a new leader, a standby).
 */
import { conflictError, type Selection } from '../../core/images/units.ts';
import { plural } from '../../core/rollout/format.ts';
import type { ImagePolicy } from '../../core/images/types.ts';
import type { DeclaredVerdict, VerdictCondition } from '../ports/declared.ts';
import { withPolicyCondition } from './policy-conditions.ts';

export const FollowingConditionType = 'Following';

/** See the module comment. */
export function followingCondition(
  policy: ImagePolicy,
  selection: Selection | undefined,
): VerdictCondition {
  const base = { type: FollowingConditionType } as const;
  if (selection === undefined)
    return {
      ...base,
      status: 'Unknown',
      reason: 'NotReadYet',
      message: 'the image driver has not read the cluster yet',
    };
  const conflicts = selection.conflicts.filter((c) => c.policies.includes(policy.name));
  const [first] = conflicts;
  if (first !== undefined) {
    const e = conflictError(first);
    const more =
      conflicts.length > 1 ? ` (and ${plural(conflicts.length - 1, 'more container')})` : '';
    return {
      ...base,
      status: 'False',
      reason: 'Conflict',
      message: `${e.code}: ${e.message}${more}; ${e.hint ?? ''}`,
    };
  }
  const units = selection.units.filter((u) => u.policy === policy.name);
  if (units.length === 0)
    return {
      ...base,
      status: 'False',
      reason: 'SelectsNothing',
      message: `no container of the workloads it names runs ${policy.repository}: check workloads (namespaces, names, matchLabels, kinds, containers) and repository`,
    };
  const containers = units.reduce((n, u) => n + u.containers.length, 0);
  return {
    ...base,
    status: 'True',
    reason: 'Selected',
    message: `follows ${plural(containers, 'container')} of ${plural(units.length, 'workload')} in ${policy.repository}`,
  };
}

/** The `ImagePolicy` objects' verdicts, each in force with its `Following` condition. */
export const withFollowingConditions = (
  verdicts: readonly DeclaredVerdict[],
  accepted: ReadonlyMap<string, ImagePolicy>,
  selection: Selection | undefined,
): DeclaredVerdict[] =>
  withPolicyCondition(verdicts, accepted, (p) => followingCondition(p, selection));
