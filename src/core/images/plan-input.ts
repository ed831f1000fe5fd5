// SPDX-License-Identifier: Apache-2.0
/**
 * Image units as the rollout planner's machines and pools (docs/adr/0013 decision 2), so canary,
 * rate, windows, soak, failure budget and approval come from the one tested planner.
 *
 * - One synthetic pool per (policy, target tag + digest), named `<policy>/<tag>`, carrying the
 *   policy's `policies` and `requireApproval`. A moved tag is a release of that pool.
 * - The policy's `canary` becomes, in a pool holding canary units, a `zones` policy on the label
 *   `molt.dev/canary` with order `['yes']` — the planner orders `yes` units first and picks its
 *   canaries from the front of that order — and a `canary` policy `{count: canary units, soakMs}`,
 *   so the others wait until the canaries finished and soaked. These replace a `canary` or `zones`
 *   the policy's `policies` may also hold (a pool holds one of each); without `canary`, those are
 *   fitted to the pool (see {@link poolPolicies}), so the pools pass `validatePolicies`.
 * - Each unit is a `Machine`: id the unit id, role `worker`, labels the workload's plus
 *   `molt.dev/canary: yes|no`, `digest` the one it runs, `version` its tag, `available` the
 *   workload's. A unit whose decision is `current`, `wait` or `skip` is in no pool and left out,
 *   except a GM-pinned one that would otherwise move: it joins that pool with a `pin` whose version
 *   is its digest (never a tag), so every rollout of the pool shows it `Pinned` and passes it over.
 */
import type { Machine, Policy, Pool } from '../rollout/types.ts';
import { parseImageReference } from '../slots/reference.ts';
import type { TagTarget, TargetDecision } from './target.ts';
import { AllNamespaces, type ImagePolicy } from './types.ts';
import { namedAs, type ImageUnit, type WorkloadView } from './units.ts';

/** The label that puts canary units first. */
export const CANARY_LABEL = 'molt.dev/canary';

export interface PlanningInput {
  readonly pools: readonly Pool[];
  readonly machines: readonly Machine[];
  /** Pool name → the tag and digest its rollout moves to. */
  readonly targets: ReadonlyMap<string, TagTarget>;
}

/**
 * The namespaces a policy names itself (its selectors' namespaces, `*` left out): where a bare
 * canary name is looked for, so a workload of that name in another tenant's namespace — one the
 * policy reaches only through `*` — is never its canary.
 */
export const ownNamespaces = (policy: ImagePolicy): ReadonlySet<string> =>
  new Set(policy.workloads.flatMap((s) => s.namespaces).filter((n) => n !== AllNamespaces));

type CanaryCandidate = Pick<ImageUnit, 'id' | 'workload'>;

/** Does a canary entry (`Kind/namespace/name`, `namespace/name` or a bare name) name the unit? */
function canaryNames(entry: string, unit: CanaryCandidate, own: ReadonlySet<string>): boolean {
  const slashes = entry.split('/').length - 1;
  if (slashes === 2) return entry === unit.id;
  if (slashes === 1) return namedAs(entry, unit.workload);
  return entry === unit.workload.name && own.has(unit.workload.namespace);
}

/**
 * A workload the policy's canary names: by namespace, or as `Kind/namespace/name`,
 * `namespace/name` or a bare name in the policy's own namespaces ({@link ownNamespaces}).
 */
export function isCanary(policy: ImagePolicy, unit: CanaryCandidate): boolean {
  const c = policy.canary;
  if (c === undefined) return false;
  const own = ownNamespaces(policy);
  return (
    (c.namespaces?.includes(unit.workload.namespace) ?? false) ||
    (c.workloads?.some((w) => canaryNames(w, unit, own)) ?? false)
  );
}

/** The tag the unit's first followed container runs (undefined: a digest only). */
function tagOf(unit: ImageUnit): string | undefined {
  const name = unit.containers[0];
  const image = unit.workload.containers.find((c) => c.name === name)?.image;
  return image === undefined ? undefined : parseImageReference(image).tag;
}

export function machineOf(
  policy: ImagePolicy,
  unit: ImageUnit,
  pool: string,
  digest: string | undefined,
): Machine {
  const w: WorkloadView = unit.workload;
  return {
    id: unit.id,
    role: 'worker',
    pool,
    labels: { ...w.labels, [CANARY_LABEL]: isCanary(policy, unit) ? 'yes' : 'no' },
    digest,
    version: tagOf(unit),
    available: w.available,
  };
}

/**
 * The pool's policies. With `policy.canary`, its canary (first: the planner takes the first of a
 * kind) replaces any `canary`/`zones` of the policy's. Without, the policy's are fitted to the
 * pool, which holds only the units moving to one tag: a canary count is at most its movers, and a
 * `zones` on a label no unit of the pool carries orders nothing and is left out.
 */
export function poolPolicies(policy: ImagePolicy, members: readonly Machine[]): readonly Policy[] {
  const movers = members.filter((m) => m.pin === undefined);
  if (policy.canary !== undefined) {
    const rest = policy.policies.filter((p) => p.kind !== 'canary' && p.kind !== 'zones');
    const count = movers.filter((m) => m.labels[CANARY_LABEL] === 'yes').length;
    if (count === 0) return rest;
    return [
      { kind: 'zones', label: CANARY_LABEL, order: ['yes'] },
      { kind: 'canary', count, soakMs: policy.canary.soakMs },
      ...rest,
    ];
  }
  return policy.policies.flatMap((p): Policy[] => {
    if (p.kind === 'canary') return [{ ...p, count: Math.min(p.count, movers.length) }];
    if (p.kind === 'zones' && !members.some((m) => p.label in m.labels)) return [];
    return [p];
  });
}

/** See the module comment. `decisions` is by unit id, one per unit (its first followed container). */
export function planningInput(i: {
  readonly policy: ImagePolicy;
  readonly units: readonly ImageUnit[];
  readonly decisions: ReadonlyMap<string, TargetDecision>;
}): PlanningInput {
  const { policy } = i;
  const targets = new Map<string, TagTarget>();
  const byTarget = new Map<string, string>();
  const poolOf = (t: TagTarget): string => {
    const key = `${t.tag}@${t.digest}`;
    let name = byTarget.get(key);
    if (name === undefined) {
      name = `${policy.name}/${t.tag}`;
      // One view gives a tag one digest; decisions from two views must still not share a pool.
      if (targets.has(name)) name = `${name}@${t.digest}`;
      byTarget.set(key, name);
      targets.set(name, { tag: t.tag, digest: t.digest });
    }
    return name;
  };
  const machines: Machine[] = [];
  for (const unit of i.units) {
    const d = i.decisions.get(unit.id);
    if (d?.kind === 'move') machines.push(machineOf(policy, unit, poolOf(d), d.from));
  }
  for (const unit of i.units) {
    const d = i.decisions.get(unit.id);
    if (d?.kind !== 'skip' || d.pin === undefined || d.wouldMoveTo === undefined) continue;
    const pool = byTarget.get(`${d.wouldMoveTo.tag}@${d.wouldMoveTo.digest}`);
    if (pool === undefined) continue; // no unit moves there: no rollout to pass it over
    const pin = { version: d.pin.digest, reason: `GM image: ${d.pin.reason}` };
    machines.push({ ...machineOf(policy, unit, pool, d.pin.digest), pin });
  }
  const pools = [...targets.keys()].map((name): Pool => ({
    name,
    policies: poolPolicies(
      policy,
      machines.filter((m) => m.pool === name),
    ),
    ...(policy.requireApproval === true && { requireApproval: true }),
  }));
  return { pools, machines, targets };
}
