// SPDX-License-Identifier: Apache-2.0
/**
 * Reading the declared molt.dev objects of the operator's namespace (docs/adr/0011): one list per
 * kind per pass. Each object is judged on its own — one bad `Pool` never hides the others — with
 * the operator's complete check (`protocol/kube-resources.ts`, then core's policy validation),
 * which also catches what the CRD's schema and CEL rules cannot (a cron expression, a time zone).
 */
import { validatePolicies } from '../../../core/rollout/index.ts';
import { isMoltError } from '../../../core/errors.ts';
import {
  MachineHoldSpec,
  PoolFinalizer,
  RolloutActionFields,
  parsePoolSpec,
} from '../../../protocol/kube-resources.ts';
import { imagePolicySchema } from '../../../protocol/image-policy.ts';
import { KubernetesClusterSpec } from '../../../protocol/kube-cluster.ts';
import type {
  DeclaredHold,
  DeclaredImagePolicy,
  DeclaredKubernetesCluster,
  DeclaredPool,
  RolloutRequest,
} from '../../ports/declared.ts';

/** The parts of a listed object this adapter reads. */
export interface ListedObject {
  readonly metadata?: {
    readonly name?: string;
    readonly namespace?: string;
    readonly generation?: number;
    readonly resourceVersion?: string;
    readonly deletionTimestamp?: unknown;
    readonly finalizers?: readonly string[];
    readonly managedFields?: readonly {
      readonly manager?: string;
      readonly time?: unknown;
      readonly fieldsV1?: unknown;
    }[];
  };
  readonly spec?: unknown;
  readonly status?: { readonly conditions?: readonly unknown[] } & Record<string, unknown>;
}

const nameOf = (o: ListedObject): string => o.metadata?.name ?? '';
const generationOf = (o: ListedObject): number => o.metadata?.generation ?? 0;

/** A pool as the operator will use it, or why not. */
export function declaredPool(o: ListedObject): DeclaredPool {
  const name = nameOf(o);
  const base = {
    name,
    deleting: o.metadata?.deletionTimestamp != null,
    generation: generationOf(o),
  };
  const parsed = parsePoolSpec(name, o.spec);
  if ('invalid' in parsed) return { ...base, invalid: parsed.invalid };
  try {
    validatePolicies([parsed.pool], [], []);
  } catch (e) {
    if (!isMoltError(e)) throw e;
    // Core names the field in its model (`pools[0].policies[1]…`): this object has one pool.
    return { ...base, invalid: e.message.replace(/pools\[0\]\./g, 'spec.') };
  }
  return { ...base, pool: parsed.pool };
}

/** Does the pool still need the finalizer put on it? */
export const needsFinalizer = (o: ListedObject): boolean =>
  o.metadata?.deletionTimestamp == null && !(o.metadata?.finalizers ?? []).includes(PoolFinalizer);

/**
 * The first problem of a spec, named by its field path under `spec`, with its own code when the
 * schema gives one (`MOLT_KUBE_FLAG_INSECURE` …).
 */
function firstIssue(error: {
  issues: readonly {
    path: readonly PropertyKey[];
    message: string;
    params?: Record<string, unknown> | undefined;
  }[];
}) {
  const issue = error.issues[0];
  const at = ['spec', ...(issue?.path ?? []).map(String)].join('.');
  const code = issue?.params?.['code'];
  const coded = typeof code === 'string' ? ` (${code})` : '';
  return `${at}: ${issue?.message ?? 'invalid'}${coded}`;
}

/** A cluster's Kubernetes as configured, or why not (docs/adr/0012). */
export function declaredKubernetesCluster(o: ListedObject): DeclaredKubernetesCluster {
  const name = nameOf(o);
  const r = KubernetesClusterSpec.safeParse(o.spec ?? {});
  if (!r.success) return { name, invalid: firstIssue(r.error), generation: generationOf(o) };
  return { name, spec: r.data, generation: generationOf(o) };
}

/**
 * An image policy, or why not (docs/adr/0013): the fleet file's schema, named by the object. Its
 * selectors name their namespaces as a fleet file's do: the object lives in the operator's
 * namespace, where no workload runs, so defaulting to it would follow nothing and isolate nobody.
 */
export function declaredImagePolicy(o: ListedObject): DeclaredImagePolicy {
  const name = nameOf(o);
  const r = imagePolicySchema.safeParse({ ...(o.spec ?? {}), name });
  if (!r.success) return { name, invalid: firstIssue(r.error), generation: generationOf(o) };
  return { name, policy: r.data, generation: generationOf(o) };
}

/** A hold, or why not (a `MachineHold` naming an unknown machine is judged by the loop). */
export function declaredHold(
  o: ListedObject,
): DeclaredHold | { name: string; invalid: string; generation: number } {
  const name = nameOf(o);
  const r = MachineHoldSpec.safeParse(o.spec ?? {});
  if (!r.success) return { name, invalid: firstIssue(r.error), generation: generationOf(o) };
  return {
    name,
    machine: r.data.machine,
    reason: r.data.reason,
    generation: generationOf(o),
    ...(r.data.until !== undefined && { until: r.data.until }),
    ...(r.data.version !== undefined && { version: r.data.version }),
  };
}

const actionKeys = ['f:paused', 'f:approved', 'f:cancelled', 'f:rollback'];

const setsAction = (fieldsV1: unknown): boolean => {
  const spec = (fieldsV1 as Record<string, unknown> | undefined)?.['f:spec'];
  return typeof spec === 'object' && spec !== null && actionKeys.some((k) => k in spec);
};

const timeOf = (t: unknown): string =>
  t instanceof Date ? t.toISOString() : typeof t === 'string' ? t : '';

/** The field manager that last set one of the action fields (`kubectl-patch`, `argocd-controller` …). */
function managerOf(o: ListedObject): string {
  const setters = (o.metadata?.managedFields ?? [])
    .filter((f) => setsAction(f.fieldsV1))
    .map((f) => ({ manager: f.manager ?? 'unknown', time: timeOf(f.time) }))
    .toSorted((a, b) => (a.time < b.time ? 1 : -1));
  return setters[0]?.manager ?? 'unknown';
}

/** What a Rollout object's spec asks, when it asks anything. */
export function rolloutRequest(o: ListedObject): RolloutRequest | undefined {
  const r = RolloutActionFields.safeParse(o.spec ?? {});
  if (!r.success) return undefined;
  const { paused, approved, cancelled, rollback } = r.data;
  if ([paused, approved, cancelled, rollback].every((v) => v === undefined)) return undefined;
  return {
    rollout: nameOf(o),
    by: `kubernetes:${managerOf(o)}`,
    ...(paused !== undefined && { paused }),
    ...(approved !== undefined && { approved }),
    ...(cancelled !== undefined && { cancelled }),
    ...(rollback !== undefined && { rollback }),
  };
}
