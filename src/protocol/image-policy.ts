// SPDX-License-Identifier: Apache-2.0
/**
 * The image policy as written (docs/adr/0013): a fleet file's `images:` item and a molt.dev
 * `ImagePolicy`'s spec with its name — one schema, so both are checked alike. Durations are text
 * ("10m"); the output is core's {@link ImagePolicy}.
 */
import { validRange } from 'semver';
import { z } from 'zod';
import { ErrorCode } from '../core/errors.ts';
import {
  AllNamespaces,
  WorkloadKinds,
  type ImageFollow,
  type ImagePolicy,
  type WorkloadSelector,
} from '../core/images/types.ts';
import { duration, policySchema } from './policy-schema.ts';

const name = z.string().min(1, 'must not be empty');
const digest = z
  .string()
  .regex(/^sha256:[a-f0-9]{64}$/, 'must be a digest like sha256:<64 hex digits>');
const platform = z
  .string()
  .regex(/^[a-z0-9]+\/[a-z0-9_]+(?:\/[a-z0-9]+)?$/, 'must be os/arch[/variant], e.g. linux/amd64');
/** `host[:port]/path`: a registry host, then a repository path; no tag, no digest. */
const repository = z
  .string()
  .regex(
    /^[a-zA-Z0-9.-]+(?::[0-9]{1,5})?\/[a-z0-9]+(?:(?:\.|_|__|-+)[a-z0-9]+)*(?:\/[a-z0-9]+(?:(?:\.|_|__|-+)[a-z0-9]+)*)*$/,
    'must be a repository with its registry, no tag or digest: registry.example.com/acme/web',
  );

const semverFollow = z
  .strictObject({
    semver: z.string().refine((r) => validRange(r) !== null, 'is not a semver range'),
  })
  .transform((s): ImageFollow => ({ kind: 'semver', range: s.semver }));

/** A tier by name, or `{semver: range}` — read by hand so a bad range is named, not "no union matched". */
const follow = z.unknown().transform((v, ctx): ImageFollow => {
  if (v === 'rebuilds' || v === 'revisions') return { kind: v };
  if (typeof v === 'object' && v !== null) {
    const r = semverFollow.safeParse(v);
    if (r.success) return r.data;
    for (const i of r.error.issues)
      ctx.addIssue({ code: 'custom', message: i.message, path: i.path });
    return z.NEVER;
  }
  ctx.addIssue({ code: 'custom', message: 'must be rebuilds, revisions or {semver: "<range>"}' });
  return z.NEVER;
});

/** A namespace, or `*` (every namespace) — the latter only alone, see {@link scopeOf}. */
const namespace = name.refine((n) => !n.includes('/'), 'is a namespace: no "/"');
/** `namespace/name`, or a bare `name` (looked for within the selector's namespaces). */
const workloadName = name.regex(/^[^/]+(?:\/[^/]+)?$/, 'must be name or namespace/name');
/** `Kind/namespace/name`, `namespace/name` or a bare `name` (in the policy's own namespaces). */
const canaryName = name.regex(
  /^[^/]+(?:\/[^/]+){0,2}$/,
  'must be name, namespace/name or Kind/namespace/name',
);

const rawSelector = z.strictObject({
  namespaces: z.array(namespace).min(1).optional(),
  matchLabels: z.record(z.string(), z.string()).optional(),
  kinds: z.array(z.enum(WorkloadKinds)).min(1).optional(),
  names: z.array(workloadName).min(1).optional(),
  containers: z.array(name).min(1).optional(),
});
type RawSelector = z.output<typeof rawSelector>;

const namespaceOf = (n: string): string | undefined =>
  n.includes('/') ? n.slice(0, n.indexOf('/')) : undefined;

/** An issue with molt's own code (`parseFleet` reports it under that code). */
const scopeIssue = (message: string, path: PropertyKey[] = []) => ({
  code: 'custom' as const,
  message,
  path,
  params: { code: ErrorCode.ImagePolicyNamespaces },
});

/**
 * Where a selector looks. A policy never reaches a namespace nobody named: the namespaces written,
 * else those its `names` qualify (`shop/web`). A policy has no namespace of its own — an
 * `ImagePolicy` object's is the operator's, where no workload runs — so it must say (`['*']` for
 * every namespace, written out). Undefined: refused.
 */
function scopeOf(w: RawSelector): readonly string[] | undefined {
  if (w.namespaces !== undefined) return w.namespaces;
  const qualified = (w.names ?? []).map(namespaceOf);
  if (w.names !== undefined && qualified.every((q) => q !== undefined))
    return [...new Set(qualified)];
  return undefined;
}

/** Problems of a selector's namespaces, by field: `*` among others, a `names` entry outside them. */
function scopeProblems(
  w: RawSelector,
  namespaces: readonly string[],
): readonly (readonly [PropertyKey[], string])[] {
  if (namespaces.includes(AllNamespaces))
    return namespaces.length > 1
      ? [[['namespaces'], '* means every namespace: write it alone']]
      : [];
  return (w.names ?? []).flatMap((n, i) => {
    const ns = namespaceOf(n);
    return ns === undefined || namespaces.includes(ns)
      ? []
      : [[['names', i], `${n} is outside namespaces (${namespaces.join(', ')})`] as const];
  });
}

const workloadSchema = rawSelector.transform((w, ctx): WorkloadSelector => {
  const namespaces = scopeOf(w);
  if (namespaces === undefined) {
    ctx.addIssue(
      scopeIssue(
        'names no namespace, and an image policy has none of its own: give namespaces (["*"] for every namespace, written out) or names as namespace/name',
      ),
    );
    return z.NEVER;
  }
  for (const [path, problem] of scopeProblems(w, namespaces))
    ctx.addIssue(scopeIssue(problem, path));
  return {
    namespaces,
    ...(w.matchLabels !== undefined && { matchLabels: w.matchLabels }),
    ...(w.kinds !== undefined && { kinds: w.kinds }),
    ...(w.names !== undefined && { names: w.names }),
    ...(w.containers !== undefined && { containers: w.containers }),
  };
});

/**
 * Policies that only mean something for machines: roles and zones (the canary orders workloads),
 * and gates (a workload's health is its own rollout's availability, read by the image driver).
 */
const machineOnly: ReadonlySet<string> = new Set(['control-plane-first', 'zones', 'gate']);

/**
 * A fleet file's `images` item, or a molt.dev `ImagePolicy`'s spec with its name: each selector
 * names its namespaces (see {@link scopeOf}).
 */
export const imagePolicySchema = z
  .strictObject({
    name,
    repository,
    follow,
    workloads: z
      .array(workloadSchema)
      .min(1, 'names no workload: give at least one selector (namespaces, names, matchLabels)'),
    canary: z
      .strictObject({
        namespaces: z
          .array(
            namespace.refine((n) => n !== AllNamespaces, 'a canary of every namespace is none'),
          )
          .min(1)
          .optional(),
        workloads: z.array(canaryName).min(1).optional(),
        soak: duration.optional(),
      })
      .refine((c) => c.namespaces !== undefined || c.workloads !== undefined, {
        message: 'a canary names namespaces or workloads',
      })
      .optional(),
    policies: z
      .array(policySchema)
      .default([])
      .refine((ps) => ps.every((p) => !machineOnly.has(p.kind)), {
        message:
          'controlPlaneFirst, zones and gate are machine policies: an image policy orders workloads with canary, and a workload is healthy when its own rollout is available',
      }),
    requireApproval: z.boolean().optional(),
    requireSignature: z.boolean().optional(),
    platforms: z.array(platform).min(1).optional(),
    settle: duration.optional(),
    progressTimeout: duration.optional(),
    onHalt: z.enum(['stop', 'rollback']).optional(),
    gm: z.array(z.strictObject({ digest, reason: name })).default([]),
  })
  .refine((p) => p.canary === undefined || p.policies.every((x) => x.kind !== 'canary'), {
    message:
      'the canary is given twice: keep canary: {namespaces|workloads, soak} or a canary policy, not both',
    path: ['canary'],
  })
  .superRefine((p, ctx) => {
    const named = p.workloads.some((w) => w.namespaces.some((n) => n !== AllNamespaces));
    const bare = (p.canary?.workloads ?? []).filter((w) => !w.includes('/'));
    if (!named && bare.length > 0)
      ctx.addIssue(
        scopeIssue(
          `canary workload ${bare.join(', ')} names no namespace, and the policy names none but *: write namespace/name`,
          ['canary', 'workloads'],
        ),
      );
  })
  .transform((p): ImagePolicy => ({
    name: p.name,
    repository: p.repository,
    follow: p.follow,
    workloads: p.workloads,
    policies: p.policies,
    gm: p.gm,
    ...(p.canary !== undefined && {
      canary: {
        ...(p.canary.namespaces !== undefined && { namespaces: p.canary.namespaces }),
        ...(p.canary.workloads !== undefined && { workloads: p.canary.workloads }),
        soakMs: p.canary.soak ?? 0,
      },
    }),
    ...(p.requireApproval !== undefined && { requireApproval: p.requireApproval }),
    ...(p.requireSignature !== undefined && { requireSignature: p.requireSignature }),
    ...(p.platforms !== undefined && { platforms: p.platforms }),
    ...(p.settle !== undefined && { settleMs: p.settle }),
    ...(p.progressTimeout !== undefined && { progressTimeoutMs: p.progressTimeout }),
    ...(p.onHalt !== undefined && { onHalt: p.onHalt }),
  }));

export type ImagePolicyInput = z.input<typeof imagePolicySchema>;
