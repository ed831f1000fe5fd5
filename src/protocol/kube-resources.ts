// SPDX-License-Identifier: Apache-2.0
/**
 * The specs of the molt.dev resources a person applies (docs/adr/0011): a `Pool` is a fleet
 * file's pool (same fields, same schema: one model behind both), a `MachineHold` holds one
 * machine, and a `Rollout`'s action fields ask the operator to pause, resume, approve, cancel or
 * roll back the rollout it mirrors. The CRDs (`deploy/kubernetes/crds.yaml`) check the shape on
 * the API server; these schemas are the operator's own, complete check.
 */
import { z } from 'zod';
import type { Pool } from '../core/rollout/types.ts';
import { poolSchema, time } from './fleet-schema.ts';

/** API group and version of every molt.dev resource. */
export const MoltGroup = 'molt.dev';
export const MoltVersion = 'v1alpha1';
/** The finalizer the operator keeps on a declared pool until nothing of it is in flight. */
export const PoolFinalizer = 'molt.dev/pool';
/**
 * The Node annotation where an agent advertises its API (`https://host:port`). Written by the
 * Node's own agent (`kubernetes.advertise`) — deploy/kubernetes/rbac.yaml lets no other agent
 * write it — or its kubelet; the operator still checks the agent's certificate name.
 */
export const AgentEndpointAnnotation = 'molt.dev/agent-endpoint';
/**
 * The Node label that makes a Node a machine of that pool (`kubernetes.nodes` in the operator),
 * set by a cluster admin. Under the `node-restriction.kubernetes.io/` prefix so that a node cannot
 * put itself into a pool: NodeRestriction refuses the prefix to every kubelet, and
 * deploy/kubernetes/rbac.yaml's admission policy refuses all labels but the quarantine to agents.
 */
export const PoolLabel = 'node-restriction.kubernetes.io/molt-pool';
/**
 * The pool label before it moved under `node-restriction.kubernetes.io/`: a kubelet may set it on
 * its own Node, so the operator never takes a pool from it; it only says what to label instead.
 */
export const UntrustedPoolLabel = 'molt.dev/pool';
/** `by` of the holds the operator writes for a `MachineHold` (followed by the object's name). */
export const DeclaredHoldPrefix = 'kubernetes:MachineHold/';

/** A `Pool`'s spec, parsed as the fleet file's pool of that name; the first problem named by path. */
export function parsePoolSpec(name: string, spec: unknown): { pool: Pool } | { invalid: string } {
  const r = poolSchema.safeParse({ ...(isObject(spec) ? spec : {}), name });
  if (r.success) return { pool: r.data };
  const issue = r.error.issues[0];
  const at = ['spec', ...(issue?.path ?? []).map(String)].join('.');
  return { invalid: `${at}: ${issue?.message ?? 'invalid'}` };
}

/** A hold (until `until`, or until deleted) or, with `version`, a pin to that release. */
export const MachineHoldSpec = z
  .strictObject({
    machine: z.string().min(1, 'must name a machine'),
    reason: z.string().min(1, 'must say why').max(500),
    until: time.optional(),
    version: z.string().min(1).max(128).optional(),
  })
  .refine((s) => s.until === undefined || s.version === undefined, {
    message: 'a pin (version) lasts until the object is deleted: leave out until',
    path: ['until'],
  });
export type MachineHoldSpec = z.output<typeof MachineHoldSpec>;

/** What the operator keeps as `OperatorRecord`s when its store is `kubernetes` (docs/adr/0016). */
export const OperatorRecordKinds = [
  'machine',
  'rollout',
  'hold',
  'block',
  'cursor',
  'history',
  'kubeplans',
  'kubedesired',
  'fleetlock',
] as const;

/** The fields of a `Rollout`'s spec a person sets; the rest of the spec is the operator's. */
export const RolloutActionFields = z.object({
  paused: z.boolean().optional(),
  approved: z.boolean().optional(),
  cancelled: z.boolean().optional(),
  rollback: z.boolean().optional(),
});
export type RolloutActionFields = z.output<typeof RolloutActionFields>;

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
