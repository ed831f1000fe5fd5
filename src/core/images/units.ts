// SPDX-License-Identifier: Apache-2.0
/**
 * Which containers of which workloads each image policy takes (docs/adr/0013 decision 1). A
 * container is selected by a policy when its image is in the policy's repository and some selector
 * of `policy.workloads` matches — every field it gives: namespaces (always given: a policy reaches
 * only the namespaces it names, `*` only when written), matchLabels on the workload, kinds, names
 * (`namespace/name`, or a bare name within those namespaces), container names (init containers
 * included). A container two policies select is a
 * conflict (`MOLT_IMAGE_POLICY_CONFLICT`): neither takes it, both are named. The containers one
 * policy takes in one workload make one unit, the planner's machine (`plan-input.ts`).
 */
import { ErrorCode, isMoltError, MoltError } from '../errors.ts';
import { parseImageReference } from '../slots/reference.ts';
import type { WorkloadView } from './workload.ts';
import { AllNamespaces, type ImagePolicy, type WorkloadSelector } from './types.ts';

export type { WorkloadView } from './workload.ts';

/** The containers one policy follows in one workload. */
export interface ImageUnit {
  /** `${kind}/${namespace}/${name}`. */
  readonly id: string;
  readonly policy: string;
  readonly workload: WorkloadView;
  /** The container names this policy follows in it, in the workload's order. */
  readonly containers: readonly string[];
}

export interface ImageConflict {
  readonly unit: string;
  readonly container: string;
  readonly policies: readonly string[];
}

export interface Selection {
  readonly units: readonly ImageUnit[];
  /** A container two policies select: neither policy takes it (both named). */
  readonly conflicts: readonly ImageConflict[];
  /** Policies that select no container at all (reported, not an error). */
  readonly empty: readonly string[];
}

export const unitId = (w: Pick<WorkloadView, 'kind' | 'namespace' | 'name'>): string =>
  `${w.kind}/${w.namespace}/${w.name}`;

/** `host[:port]/path` of an image, or undefined when it is not a reference with a registry. */
export function repositoryOf(image: string): string | undefined {
  try {
    const ref = parseImageReference(image);
    return `${ref.registry}/${ref.repository}`;
  } catch (e) {
    if (isMoltError(e)) return undefined;
    throw e;
  }
}

const within = <T>(allowed: readonly T[] | undefined, value: T): boolean =>
  allowed === undefined || allowed.includes(value);

/** A selector's namespaces: the ones it names, or every one when it says `['*']`. */
export const inNamespaces = (namespaces: readonly string[], namespace: string): boolean =>
  namespaces.includes(namespace) || (namespaces.length === 1 && namespaces[0] === AllNamespaces);

/** `namespace/name` names that workload alone; a bare `name` any of that name the selector sees. */
export const namedAs = (entry: string, w: Pick<WorkloadView, 'namespace' | 'name'>): boolean =>
  entry.includes('/') ? entry === `${w.namespace}/${w.name}` : entry === w.name;

function matches(s: WorkloadSelector, w: WorkloadView, container: string): boolean {
  return (
    inNamespaces(s.namespaces, w.namespace) &&
    within(s.kinds, w.kind) &&
    (s.names === undefined || s.names.some((n) => namedAs(n, w))) &&
    within(s.containers, container) &&
    Object.entries(s.matchLabels ?? {}).every(([k, v]) => w.labels[k] === v)
  );
}

/** Every policy's units, the conflicts and the policies that select nothing; see the module comment. */
export function selectUnits(
  policies: readonly ImagePolicy[],
  workloads: readonly WorkloadView[],
): Selection {
  const units: ImageUnit[] = [];
  const conflicts: ImageConflict[] = [];
  const selecting = new Set<string>();
  for (const w of workloads) {
    const taken = new Map<string, string[]>();
    for (const c of w.containers) {
      const repository = repositoryOf(c.image);
      const by = policies.filter(
        (p) => p.repository === repository && p.workloads.some((s) => matches(s, w, c.name)),
      );
      for (const p of by) selecting.add(p.name);
      if (by.length > 1) {
        conflicts.push({ unit: unitId(w), container: c.name, policies: by.map((p) => p.name) });
      } else if (by[0] !== undefined) {
        taken.set(by[0].name, [...(taken.get(by[0].name) ?? []), c.name]);
      }
    }
    for (const [policy, containers] of taken)
      units.push({ id: unitId(w), policy, workload: w, containers });
  }
  const empty = policies.filter((p) => !selecting.has(p.name)).map((p) => p.name);
  return { units, conflicts, empty };
}

/** The error a conflict is reported with (an Event, the policy's condition, `molt images status`). */
export function conflictError(c: ImageConflict): MoltError {
  return new MoltError(
    ErrorCode.ImagePolicyConflict,
    `container ${c.container} of ${c.unit} is selected by image policies ${c.policies.join(' and ')}: neither follows it`,
    {
      details: { unit: c.unit, container: c.container, policies: c.policies },
      hint: 'narrow one policy’s workloads (namespaces, names, matchLabels or containers) so each container follows one policy',
    },
  );
}
