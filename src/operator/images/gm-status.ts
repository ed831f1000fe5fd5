// SPDX-License-Identifier: Apache-2.0
/**
 * What the GM checks (`gm-check.ts`) say to people (docs/adr/0013 decision 5): the `GMImageMissing`
 * condition of an `ImagePolicy` object, and the changes worth a log line (and, for a digest that
 * went missing, a warning in the history) — once per change, never on every check.
 */
import type { ImagePolicy } from '../../core/images/types.ts';
import type { DeclaredVerdict } from '../ports/declared.ts';
import type { GmFinding, GmState } from './gm-check.ts';
import { withPolicyCondition } from './policy-conditions.ts';

export const GmConditionType = 'GMImageMissing';

/** A status condition, as the declared source writes it beside `Accepted`. */
export interface GmCondition {
  readonly type: typeof GmConditionType;
  readonly status: 'True' | 'False' | 'Unknown';
  readonly reason: 'DigestMissing' | 'AllPresent' | 'RegistryUnreachable' | 'NotCheckedYet';
  readonly message: string;
}

const pinText = (f: Pick<GmFinding, 'digest' | 'reason'>): string => `${f.digest} (${f.reason})`;

/**
 * The `GMImageMissing` condition of `policy` from the last findings: True naming every missing
 * digest, False when every pin was found, Unknown when a pin could not be checked (the registry
 * failed, or no check has run yet) and none is missing. None for a policy without GM pins.
 */
export function gmCondition(
  policy: ImagePolicy,
  findings: readonly GmFinding[] | undefined,
): GmCondition | undefined {
  if (policy.gm.length === 0) return undefined;
  const found = new Map(
    (findings ?? []).filter((f) => f.policy === policy.name).map((f) => [f.digest, f]),
  );
  const base = { type: GmConditionType } as const;
  const pins = policy.gm.map((g) => ({ ...g, finding: found.get(g.digest) }));
  const missing = pins.filter((p) => p.finding?.state === 'missing');
  if (missing.length > 0)
    return {
      ...base,
      status: 'True',
      reason: 'DigestMissing',
      message: `not in ${policy.repository} any more: ${missing.map(pinText).join(', ')}`,
    };
  const unchecked = pins.filter((p) => p.finding === undefined);
  if (unchecked.length > 0)
    return {
      ...base,
      status: 'Unknown',
      reason: 'NotCheckedYet',
      message: `not checked yet: ${unchecked.map((p) => p.digest).join(', ')}`,
    };
  const unknown = pins.filter((p) => p.finding?.state === 'unknown');
  if (unknown.length > 0)
    return {
      ...base,
      status: 'Unknown',
      reason: 'RegistryUnreachable',
      message: unknown.map((p) => `${p.digest}: ${p.finding?.message ?? 'unknown'}`).join('; '),
    };
  return {
    ...base,
    status: 'False',
    reason: 'AllPresent',
    message: `${String(pins.length)} GM digest${pins.length === 1 ? '' : 's'} present in ${policy.repository}`,
  };
}

/** The `ImagePolicy` objects' verdicts, each in force with its `GMImageMissing` condition. */
export const withGmConditions = (
  verdicts: readonly DeclaredVerdict[],
  accepted: ReadonlyMap<string, ImagePolicy>,
  findings: readonly GmFinding[] | undefined,
): DeclaredVerdict[] => withPolicyCondition(verdicts, accepted, (p) => gmCondition(p, findings));

/** One digest whose state changed since the last check. */
export interface GmChange {
  readonly finding: GmFinding;
  /** Its state before; undefined on its first check. */
  readonly was?: GmState;
}

const keyOf = (f: Pick<GmFinding, 'policy' | 'digest'>): string => `${f.policy}\0${f.digest}`;

/**
 * The changes from `previous` (each digest's last state, by policy and digest) to `findings`, and
 * the states to keep for the next check. A first check reports only what is not present: a fleet
 * whose GM images are all there says nothing.
 */
export function gmChanges(
  previous: ReadonlyMap<string, GmState>,
  findings: readonly GmFinding[],
): { readonly changes: readonly GmChange[]; readonly next: ReadonlyMap<string, GmState> } {
  const next = new Map<string, GmState>();
  const changes: GmChange[] = [];
  for (const f of findings) {
    const key = keyOf(f);
    next.set(key, f.state);
    const was = previous.get(key);
    if (was === f.state || (was === undefined && f.state === 'present')) continue;
    changes.push(was === undefined ? { finding: f } : { finding: f, was });
  }
  return { changes, next };
}

/** The operator's log line for a change. */
export function gmChangeLine(c: GmChange): string {
  const f = c.finding;
  const what = `image policy ${f.policy}: GM digest ${pinText(f)} in ${f.repository}`;
  switch (f.state) {
    case 'missing':
      return `${what} is missing from the registry`;
    case 'present':
      return `${what} is in the registry again`;
    case 'unknown':
      return `${what} cannot be checked: ${f.message ?? 'unknown'}`;
  }
}
