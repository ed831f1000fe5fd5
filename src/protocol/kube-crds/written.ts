// SPDX-License-Identifier: Apache-2.0
/**
 * The parts of molt's custom resources only the operator writes: the specs it mirrors (Rollout,
 * Channel, NodeUpgrade) and every kind's status, as the CRDs declare them. The mirror
 * (`operator/adapters/kube-status/view.ts`) writes these shapes; fields not named here would be
 * pruned by the API server.
 */
import { z } from 'zod';
import { RolloutStates } from '../../core/rollout/vocabulary.ts';
import { OperatorRecordKinds, RolloutActionFields } from '../kube-resources.ts';
import { hints } from './shapes.ts';

const text = z.string();
const count = z.number().int();
const when = z.string().register(hints, { format: 'date-time' });
const opt = <T extends z.ZodType>(s: T) => s.optional();
const release = z.object({ version: opt(text), digest: opt(text) });

/** The conditions every kind reports, keyed by type (`kubectl wait --for=condition=…`). */
const conditions = z
  .array(
    z.object({
      type: text,
      status: z.enum(['True', 'False', 'Unknown']),
      reason: opt(text),
      message: opt(text),
      lastTransitionTime: opt(when),
      observedGeneration: opt(count),
    }),
  )
  .register(hints, { 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['type'] });

const accepted = z.object({ observedGeneration: opt(count), conditions: opt(conditions) });

export const rolloutSpec = z
  .object({ pool: opt(text), target: opt(release), from: opt(release), rollbackOf: opt(text) })
  .extend(RolloutActionFields.shape)
  .register(hints, {
    'x-kubernetes-validations': [
      {
        rule: '!has(oldSelf.cancelled) || !oldSelf.cancelled || (has(self.cancelled) && self.cancelled)',
        message: 'a cancelled rollout stays cancelled (spec.cancelled cannot be unset)',
      },
      {
        rule: '!has(oldSelf.rollback) || !oldSelf.rollback || (has(self.rollback) && self.rollback)',
        message: 'a rollback once asked for is made (spec.rollback cannot be unset)',
      },
    ],
  });

export const rolloutStatus = z.object({
  phase: opt(z.enum(RolloutStates)),
  progress: opt(text),
  ...Object.fromEntries(
    ['total', 'succeeded', 'inFlight', 'failed', 'rolledBack', 'skipped', 'pending'].map((k) => [
      k,
      opt(count),
    ]),
  ),
  machines: opt(
    z.array(
      z.object({
        name: opt(text),
        phase: opt(text),
        reason: opt(text),
        startedAt: opt(when),
        finishedAt: opt(when),
      }),
    ),
  ),
  conditions: opt(conditions),
});

export const channelSpec = z.object({ channel: opt(text) });
export const channelStatus = z.object({
  latest: opt(release),
  pools: opt(z.array(text)),
  poolList: opt(text),
  conditions: opt(conditions),
});

export const nodeUpgradeSpec = z.object(
  Object.fromEntries(['machine', 'pool', 'role', 'cluster', 'endpoint'].map((k) => [k, opt(text)])),
);
export const nodeUpgradeStatus = z.object({
  phase: opt(text),
  booted: opt(release),
  target: opt(release),
  rollout: opt(text),
  agentPhase: opt(text),
  reason: opt(text),
  observedAt: opt(when),
  conditions: opt(conditions),
});

export const poolStatus = accepted.extend({ machines: opt(count), rollout: opt(text) });
export const machineHoldStatus = accepted;
export const imagePolicyStatus = accepted;

export const kubernetesClusterStatus = accepted.extend({
  desired: opt(
    z.object({ version: opt(text), finalize: opt(z.boolean()), by: opt(text) }).register(hints, {
      description:
        'The desired Kubernetes in force and who set it: "declared", or the person whose `molt cluster kubernetes upgrade` holds until this spec changes.',
    }),
  ),
  plan: opt(
    z
      .object(
        Object.fromEntries(
          ['id', 'kind', 'phase', 'target', 'by', 'progress', 'reason'].map((k) => [k, opt(text)]),
        ),
      )
      .register(hints, {
        description: 'The cluster’s latest plan (molt cluster kubernetes status has its steps).',
      }),
  ),
});

/** The operator's own records (`store: kubernetes`): `data` is the JSON the etcd store keeps. */
export const operatorRecordSpec = z.object({
  kind: z.enum(OperatorRecordKinds),
  key: z.string().min(1).max(1024),
  data: z.object({}).register(hints, { 'x-kubernetes-preserve-unknown-fields': true }),
});
