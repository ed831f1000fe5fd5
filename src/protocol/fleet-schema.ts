// SPDX-License-Identifier: Apache-2.0
/**
 * The fleet file's schema (the format is described in `fleet.ts`): strict zod objects whose output
 * is core's planning model. Kept apart from the YAML reader so browsers can validate a parsed
 * fleet without a YAML parser.
 */
import { z } from 'zod';
import { MachinePhases, RolloutStates } from '../core/rollout/vocabulary.ts';
import { parseTime } from '../core/time.ts';
import { clusterSchema, drainOverride } from './fleet-parts.ts';
import { imagePolicySchema } from './image-policy.ts';
import { duration, policySchema } from './policy-schema.ts';
import type {
  FleetSnapshot,
  Machine,
  MachineProgress,
  Pool,
  ProviderSettings,
  Rollout,
  StartRecord,
} from '../core/rollout/types.ts';
import { DrainTimeoutActions } from '../core/drain/pods.ts';

export const name = z.string().min(1, 'must not be empty');

export const time = z
  .string({ error: 'must be an ISO 8601 time like "2026-11-23T10:00:00Z"' })
  .transform((s, ctx) => {
    const ms = parseTime(s);
    if (ms !== undefined) return ms;
    ctx.addIssue({
      code: 'custom',
      message: `"${s}" is not an ISO 8601 time with a zone (e.g. 2026-11-23T10:00:00Z)`,
    });
    return z.NEVER;
  });

const machineSchema = z
  .strictObject({
    id: name,
    role: z.enum(['control-plane', 'worker']).default('worker'),
    pool: name,
    cluster: name.optional(),
    labels: z
      .record(z.string(), z.string({ error: 'label values are strings (quote them)' }))
      .default({}),
    version: z.string({ error: 'must be a string (quote versions like "1.0")' }).optional(),
    digest: z.string().optional(),
    available: z.boolean().default(true),
    hold: z.strictObject({ reason: z.string(), until: time }).optional(),
    pin: z.strictObject({ version: z.string(), reason: z.string() }).optional(),
    wariness: z.number().min(0).lt(1, 'must be below 1').optional(),
    endpoint: z.url({ protocol: /^https$/, message: 'must be an https:// URL' }).optional(),
  })
  .transform((m): Machine => ({
    id: m.id,
    role: m.role,
    pool: m.pool,
    labels: m.labels,
    version: m.version,
    digest: m.digest,
    available: m.available,
    ...(m.cluster !== undefined && { cluster: m.cluster }),
    ...(m.hold !== undefined && { hold: m.hold }),
    ...(m.pin !== undefined && { pin: m.pin }),
    ...(m.wariness !== undefined && { wariness: m.wariness }),
    ...(m.endpoint !== undefined && { endpoint: m.endpoint }),
  }));

function providerSettings(
  p: { url: string; timeout?: number | undefined } | { capi: Record<string, never> },
): ProviderSettings {
  if ('capi' in p) return { capi: {} };
  return { url: p.url, ...(p.timeout !== undefined && { timeoutMs: p.timeout }) };
}

/** One pool: a fleet file's `pools` item, and a molt.dev `Pool`'s spec with its name. */
export const poolSchema = z
  .strictObject({
    name,
    channel: z.string().optional(),
    requireApproval: z.boolean().optional(),
    /** A release must have been known this long before it rolls out on its own. */
    minReleaseAge: duration.optional(),
    /** Follow what this pool has completed instead of a channel. */
    promoteFrom: name.optional(),
    phased: z.strictObject({ startFraction: z.number().min(0).max(1), duration }).optional(),
    /** `in-place` (A/B through the agent, the default) or `replace` (through the provider). */
    strategy: z.enum(['in-place', 'replace']).optional(),
    /**
     * The machine provider: an HTTP extension that re-images machines (ADR 0005, "Replace
     * strategy"), or Cluster API replacing their Machines (`{capi: {}}`, ADR 0014 decision 6).
     */
    provider: z
      .union([
        z.strictObject({
          url: z
            .url({ protocol: /^https?$/, message: 'must be an http:// or https:// URL' })
            // molt sends no credentials to a provider, and an address is quoted in errors.
            .refine((u) => !/^[a-z]+:\/\/[^/?#]*@/i.test(u), {
              message:
                'must not carry a user or password (user:password@): molt sends none, and the address appears in errors and on the dashboard',
            }),
          timeout: duration.optional(),
        }),
        z.strictObject({ capi: z.strictObject({}) }),
      ])
      .optional(),
    /** The drain policy its rollouts send with each upgrade, over each machine's own. */
    drain: z
      .strictObject({
        timeout: duration.optional(),
        onTimeout: z.enum(DrainTimeoutActions).optional(),
      })
      .optional(),
    onHalt: z.enum(['stop', 'rollback']).optional(),
    onHold: z.enum(['wait', 'skip']).optional(),
    /** Stage the release on waiting machines ahead of their start, `concurrency` at a time. */
    stage: z
      .strictObject({
        ahead: z.boolean(),
        concurrency: z.number().int().min(1).max(1000).default(1),
      })
      .optional(),
    policies: z.array(policySchema).default([]),
  })
  .refine((p) => p.channel === undefined || p.promoteFrom === undefined, {
    message: 'a pool follows a channel or promotes from another pool, not both',
  })
  .refine((p) => p.strategy !== 'replace' || p.provider !== undefined, {
    message: 'strategy replace needs a provider: {url: …} or {capi: {}}',
    path: ['strategy'],
  })
  .transform((p): Pool => ({
    name: p.name,
    policies: p.policies,
    ...(p.channel !== undefined && { channel: p.channel }),
    ...(p.requireApproval !== undefined && { requireApproval: p.requireApproval }),
    ...(p.minReleaseAge !== undefined && { minReleaseAgeMs: p.minReleaseAge }),
    ...(p.promoteFrom !== undefined && { promoteFrom: p.promoteFrom }),
    ...(p.phased !== undefined && {
      phased: { startFraction: p.phased.startFraction, durationMs: p.phased.duration },
    }),
    ...(p.strategy !== undefined && { strategy: p.strategy }),
    ...(p.onHalt !== undefined && { onHalt: p.onHalt }),
    ...(p.onHold !== undefined && { onHold: p.onHold }),
    ...(p.stage !== undefined && { stage: p.stage }),
    ...(p.drain !== undefined && { drain: drainOverride(p.drain) }),
    ...(p.provider !== undefined && { provider: providerSettings(p.provider) }),
  }));

const progressSchema = z
  .strictObject({
    phase: z.enum(MachinePhases),
    startedAt: time.optional(),
    finishedAt: time.optional(),
    reason: z.string().optional(),
  })
  .transform((p): MachineProgress => ({
    phase: p.phase,
    ...(p.startedAt !== undefined && { startedAt: p.startedAt }),
    ...(p.finishedAt !== undefined && { finishedAt: p.finishedAt }),
    ...(p.reason !== undefined && { reason: p.reason }),
  }));

export const rolloutSchema = z
  .strictObject({
    id: name,
    pool: name,
    target: z.strictObject({ version: z.string(), digest: z.string() }),
    state: z.enum(RolloutStates),
    createdAt: time,
    phased: z.strictObject({ startFraction: z.number().min(0).max(1), duration }).optional(),
    machines: z.record(z.string(), progressSchema).default({}),
  })
  .transform((r): Rollout => ({
    id: r.id,
    pool: r.pool,
    target: r.target,
    state: r.state,
    createdAt: r.createdAt,
    machines: r.machines,
    ...(r.phased !== undefined && {
      phased: { startFraction: r.phased.startFraction, durationMs: r.phased.duration },
    }),
  }));

/** Recorded upgrade starts (for rate limits): history, so they may name machines that are gone. */
export const startsSchema = z
  .array(z.strictObject({ machine: name, pool: name, rollout: name, at: time }))
  .default([]);

/** The fleet file's schema; its output is core's {@link FleetSnapshot}. */
export const FleetFile = z
  .strictObject({
    fleet: z.strictObject({ policies: z.array(policySchema).default([]) }).optional(),
    pools: z.array(poolSchema),
    machines: z.array(machineSchema),
    rollouts: z.array(rolloutSchema).default([]),
    starts: startsSchema,
    leases: z.record(z.string(), z.string()).optional(),
    clusters: z.array(clusterSchema).optional(),
    /** Image policies (docs/adr/0013). */
    images: z.array(imagePolicySchema).optional(),
  })
  .transform((f): FleetSnapshot => ({
    machines: f.machines,
    pools: f.pools,
    fleetPolicies: f.fleet?.policies ?? [],
    rollouts: f.rollouts,
    starts: f.starts satisfies StartRecord[],
    ...(f.leases !== undefined && { leases: f.leases }),
    ...(f.clusters !== undefined && { clusters: f.clusters }),
    ...(f.images !== undefined && { images: f.images }),
  }));

/** A fleet file as written (durations and times as text, defaults not applied yet). */
export type FleetFileInput = z.input<typeof FleetFile>;
