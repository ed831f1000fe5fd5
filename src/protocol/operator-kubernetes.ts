// SPDX-License-Identifier: Apache-2.0
/**
 * The operator's Kubernetes routes (docs/adr/0012 §1, §4): a cluster's control plane per machine
 * and its recorded plans, and the requests that change its Kubernetes — an upgrade (or downgrade)
 * to a version, the finalize that drops the emulation, the rollback to the recorded `from`. Each
 * POST can be a dry run: the checks and the steps, nothing changed. Same rules as `operator.ts`:
 * add fields, never rename; bodies are strict; times are ISO 8601.
 */
import { z } from 'zod';
import {
  KubeComponents,
  KubePlanKinds,
  KubePlanPhases,
  KubeStepActions,
  KubeStepStates,
} from '../core/kubernetes/types.ts';
import { KubeVersion } from './agent-kubernetes.ts';

export const KubernetesOperatorRoutes = {
  /** GET {@link KubeClusterStatusView}. */
  status: '/v1/clusters/:cluster/kubernetes',
  /** POST {@link KubeUpgradeRequestBody} → {@link KubePlanAnswer}. */
  upgrade: '/v1/clusters/:cluster/kubernetes/upgrade',
  /** POST {@link KubeFinalizeRequestBody} → {@link KubePlanAnswer}. */
  finalize: '/v1/clusters/:cluster/kubernetes/finalize',
  /** POST {@link KubeRollbackRequestBody} → {@link KubePlanAnswer}. */
  rollback: '/v1/clusters/:cluster/kubernetes/rollback',
} as const;

/** A Kubernetes route with its `:cluster` filled in. */
export const kubePath = (route: string, cluster: string): string =>
  route.replace(':cluster', encodeURIComponent(cluster));

const dryRun = z.boolean().default(false);

/** Upgrade (or downgrade) the cluster's control plane to `version`; it becomes the desired one. */
export const KubeUpgradeRequestBody = z.strictObject({ version: KubeVersion, dryRun });
/** Drop the emulation of the last minor upgrade (the point of no return). */
export const KubeFinalizeRequestBody = z.strictObject({ dryRun });
/**
 * Roll back: a plan that is still moving undoes its steps in reverse; the last plan that
 * succeeded is reversed by a new plan back to its recorded `from`.
 */
export const KubeRollbackRequestBody = z.strictObject({
  reason: z.string().min(1).max(500).optional(),
  dryRun,
});

export const KubeCheckView = z.object({ name: z.string(), ok: z.boolean(), message: z.string() });

export const KubeStepView = z.object({
  id: z.string(),
  machine: z.string(),
  action: z.enum(KubeStepActions),
  component: z.enum(KubeComponents).optional(),
  /** The version an apply runs, and its emulation. */
  version: z.string().optional(),
  emulatedVersion: z.string().optional(),
  state: z.enum(KubeStepStates),
  startedAt: z.string().optional(),
  finishedAt: z.string().optional(),
  error: z.string().optional(),
});
export type KubeStepView = z.infer<typeof KubeStepView>;

export const KubePlanView = z.object({
  id: z.string(),
  cluster: z.string(),
  kind: z.enum(KubePlanKinds),
  phase: z.enum(KubePlanPhases),
  from: z.object({ version: z.string(), emulatedVersion: z.string().optional() }),
  target: z.object({
    version: z.string(),
    bundle: z.string(),
    emulatedVersion: z.string().optional(),
    finalize: z.boolean(),
  }),
  by: z.string(),
  createdAt: z.string(),
  endedAt: z.string().optional(),
  reason: z.string().optional(),
  checks: z.array(KubeCheckView),
  steps: z.array(KubeStepView),
  rollback: z.array(KubeStepView),
});
export type KubePlanView = z.infer<typeof KubePlanView>;

/** A plan a request made (or, `dryRun`, would make); `changed` false when nothing was recorded. */
export const KubePlanAnswer = z.object({
  plan: KubePlanView,
  dryRun: z.boolean(),
  changed: z.boolean(),
});
export type KubePlanAnswer = z.infer<typeof KubePlanAnswer>;

export const KubeComponentStatusView = z.object({
  name: z.string(),
  version: z.string().optional(),
  emulatedVersion: z.string().optional(),
  running: z.boolean(),
  healthy: z.boolean(),
});

/** One control-plane machine as its agent answered (or why it did not). */
export const KubeMachineStatusView = z.object({
  machine: z.string(),
  components: z.array(KubeComponentStatusView),
  error: z.string().optional(),
});
export type KubeMachineStatusView = z.infer<typeof KubeMachineStatusView>;

export const KubeClusterStatusView = z.object({
  cluster: z.string(),
  desired: z
    .object({
      version: z.string(),
      finalize: z.boolean(),
      by: z.string(),
      at: z.string().optional(),
    })
    .optional(),
  machines: z.array(KubeMachineStatusView),
  /** The latest plan. */
  plan: KubePlanView.optional(),
  /** Every plan, oldest first, without steps. */
  plans: z.array(
    z.object({
      id: z.string(),
      kind: z.enum(KubePlanKinds),
      phase: z.enum(KubePlanPhases),
      target: z.string(),
      createdAt: z.string(),
    }),
  ),
});
export type KubeClusterStatusView = z.infer<typeof KubeClusterStatusView>;
