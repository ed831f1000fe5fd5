// SPDX-License-Identifier: Apache-2.0
/**
 * The rollout-shaping policies as written — concurrency, rate, windows, canary, batches, soaks,
 * zones, failure budget, gates — and durations: shared by pools (`fleet-schema.ts`) and image
 * policies (`image-policy.ts`). Their output is core's {@link Policy}.
 */
import { z } from 'zod';
import { parseDuration } from '../core/time.ts';
import type { Limit, Policy, Window } from '../core/rollout/policy.ts';

export const duration = z
  .string({ error: 'must be a duration like "30m", "2h" or "1d"' })
  .transform((s, ctx) => {
    const ms = parseDuration(s);
    if (ms !== undefined) return ms;
    ctx.addIssue({
      code: 'custom',
      message: `"${s}" is not a duration (e.g. 90s, 30m, 2h, 1d, 1h30m)`,
    });
    return z.NEVER;
  });

const limit = z
  .custom<number | string>((v) => typeof v === 'number' || typeof v === 'string', {
    error: 'must be a count (3) or a percentage ("25%")',
  })
  .transform((v, ctx): Limit => {
    if (typeof v === 'number' && Number.isInteger(v) && v >= 0) return { count: v };
    const m = typeof v === 'string' ? /^(\d+(?:\.\d+)?)%$/.exec(v.trim()) : null;
    if (m !== null) return { percent: Number(m[1]) };
    ctx.addIssue({
      code: 'custom',
      message: `${JSON.stringify(v)} is not a count (3) or a percentage ("25%")`,
    });
    return z.NEVER;
  });

const name = z.string().min(1, 'must not be empty');
const count = z.number().int('must be a whole number').nonnegative('must not be negative');

const windowSchema = z
  .strictObject({ cron: z.string(), duration, timeZone: z.string().min(1).optional() })
  .transform((w): Window => ({
    cron: w.cron,
    durationMs: w.duration,
    ...(w.timeZone !== undefined && { timeZone: w.timeZone }),
  }));

const policyFields = {
  concurrency: limit,
  rate: z.strictObject({ count, per: duration }),
  window: z.strictObject({
    windows: z.array(windowSchema),
    exclusions: z.array(windowSchema).optional(),
  }),
  canary: z.strictObject({ count, soak: duration.optional() }),
  batches: z.strictObject({ soak: duration }),
  machineSoak: duration,
  zones: z.strictObject({ label: name, order: z.array(name).optional() }),
  controlPlaneFirst: z.literal(true, { error: 'must be true (leave the policy out otherwise)' }),
  failureBudget: count,
  gate: z.strictObject({
    name,
    url: z.string(),
    expectStatus: z.number().int().optional(),
    timeout: duration.optional(),
  }),
};
type PolicyFields = { [K in keyof typeof policyFields]: z.output<(typeof policyFields)[K]> };
const policyKeys = Object.keys(policyFields);

/** The core policy for the one key a policy item has. */
const toPolicy: { [K in keyof PolicyFields]: (v: PolicyFields[K]) => Policy } = {
  concurrency: (limit) => ({ kind: 'concurrency', limit }),
  rate: (r) => ({ kind: 'rate', count: r.count, periodMs: r.per }),
  window: (w) => ({
    kind: 'window',
    windows: w.windows,
    ...(w.exclusions !== undefined && { exclusions: w.exclusions }),
  }),
  canary: (c) => ({ kind: 'canary', count: c.count, soakMs: c.soak ?? 0 }),
  batches: (b) => ({ kind: 'batches', soakMs: b.soak }),
  machineSoak: (soakMs) => ({ kind: 'machine-soak', soakMs }),
  zones: (z) => ({
    kind: 'zones',
    label: z.label,
    ...(z.order !== undefined && { order: z.order }),
  }),
  controlPlaneFirst: () => ({ kind: 'control-plane-first' }),
  failureBudget: (maxFailed) => ({ kind: 'failure-budget', maxFailed }),
  gate: (g) => ({
    kind: 'gate',
    name: g.name,
    url: g.url,
    ...(g.expectStatus !== undefined && { expectStatus: g.expectStatus }),
    ...(g.timeout !== undefined && { timeoutMs: g.timeout }),
  }),
};

export const policySchema = z
  .strictObject(
    Object.fromEntries(Object.entries(policyFields).map(([k, s]) => [k, s.optional()])) as {
      [K in keyof typeof policyFields]: z.ZodOptional<(typeof policyFields)[K]>;
    },
  )
  .transform((p, ctx): Policy => {
    const set = (Object.keys(p) as (keyof PolicyFields)[]).filter((k) => p[k] !== undefined);
    const [key] = set;
    if (set.length === 1 && key !== undefined) {
      return (toPolicy[key] as (v: unknown) => Policy)(p[key]);
    }
    ctx.addIssue({
      code: 'custom',
      message: `a policy has exactly one of ${policyKeys.join(', ')}${set.length > 1 ? ` (found ${set.join(', ')})` : ''}`,
    });
    return z.NEVER;
  });
