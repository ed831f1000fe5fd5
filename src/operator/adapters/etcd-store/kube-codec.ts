// SPDX-License-Identifier: Apache-2.0
/**
 * The shapes of the Kubernetes plans and desired specs in etcd (`codec.ts` reads every value
 * against its shape): every field is named, because zod drops the keys an object does not list.
 */
import { z } from 'zod';
import {
  KubeComponents,
  KubePlanKinds,
  KubePlanPhases,
  KubeStepActions,
  KubeStepStates,
} from '../../../core/kubernetes/types.ts';
import { KubernetesClusterSpec } from '../../../protocol/kube-cluster.ts';

const text = z.string().min(1);
const time = z.number().int().nonnegative();
const args = z.record(z.string(), z.string());

const spec = z.object({
  version: text,
  bundle: text,
  emulatedVersion: z.string().optional(),
  extraArgs: args,
});

const step = z.object({
  id: text,
  machine: text,
  action: z.enum(KubeStepActions),
  component: z.enum(KubeComponents).optional(),
  spec: spec.optional(),
  previous: spec.optional(),
  bundle: z.string().optional(),
  state: z.enum(KubeStepStates),
  startedAt: time.optional(),
  finishedAt: time.optional(),
  error: z.string().optional(),
});

export const kubeUpgradeSchema = z.object({
  id: text,
  cluster: text,
  kind: z.enum(KubePlanKinds),
  from: z.object({ version: text, emulatedVersion: z.string().optional() }),
  target: z.object({
    version: text,
    bundle: text,
    extraArgs: z.partialRecord(z.enum(KubeComponents), args),
    emulatedVersion: z.string().optional(),
    finalize: z.boolean(),
  }),
  phase: z.enum(KubePlanPhases),
  createdAt: time,
  endedAt: time.optional(),
  by: z.string(),
  checks: z.array(z.object({ name: z.string(), ok: z.boolean(), message: z.string() })),
  steps: z.array(step),
  rollback: z.array(step),
  reason: z.string().optional(),
});

export const kubeDesiredSchema = z.object({
  cluster: text,
  spec: KubernetesClusterSpec,
  by: z.string(),
  at: time,
  declared: z.string().optional(),
  declaredUnread: z.boolean().optional(),
});
