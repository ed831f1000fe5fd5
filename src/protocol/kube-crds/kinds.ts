// SPDX-License-Identifier: Apache-2.0
/**
 * molt's custom resources (docs/adr/0006 §9, 0011): for each kind, what `kubectl get` shows and the
 * schemas its spec and status come from. `deploy/kubernetes/crds.yaml` is rendered from this list
 * (`render.ts`, `node scripts/crds.ts`), so a field the operator reads is the field the API server
 * keeps.
 */
import type { z } from 'zod';
import { poolSchema } from '../fleet-schema.ts';
import { imagePolicySchema } from '../image-policy.ts';
import { KubernetesClusterSpec } from '../kube-cluster.ts';
import { MachineHoldSpec } from '../kube-resources.ts';
import * as shapes from './shapes.ts';
import type { Overlay } from './structural.ts';
import * as written from './written.ts';

export interface Column {
  readonly name: string;
  readonly type: 'string' | 'integer' | 'date';
  readonly jsonPath: string;
  readonly priority?: 1;
  readonly description?: string;
}

export interface CrdKind {
  readonly kind: string;
  readonly plural: string;
  readonly shortName: string;
  /** In `kubectl get molt`: the resources people declare and read. */
  readonly category: boolean;
  /** Above the CRD in the YAML: what the kind is for and who writes it. */
  readonly about: string;
  readonly columns: readonly Column[];
  readonly spec: z.ZodType;
  /** Spec fields the schema parses that come from elsewhere (the object's name). */
  readonly omit?: readonly string[];
  readonly overlay?: Overlay;
  readonly status?: z.ZodType;
  /** The object means nothing without its spec. */
  readonly specRequired?: boolean;
}

const age: Column = { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' };
const condition = (type: string, field: 'status' | 'reason' | 'message' = 'reason'): string =>
  `.status.conditions[?(@.type=='${type}')].${field}`;
const message = (type: string): Column => ({
  name: 'Message',
  type: 'string',
  jsonPath: condition(type, 'message'),
  priority: 1,
});

export const CrdKinds: readonly CrdKind[] = [
  {
    kind: 'Rollout',
    plural: 'rollouts',
    shortName: 'mro',
    category: true,
    about: `The operator mirrors its state into Rollout, Channel and NodeUpgrade every pass, so \`kubectl get molt\` shows rollouts, channels and every machine's upgrade. A person sets a Rollout's action fields (paused, approved, cancelled, rollback), which the operator reads each pass: paused true pauses an Active rollout and false resumes a Paused one; approved approves one awaiting approval; cancelled cancels it (final: machines in flight finish, none start); rollback rolls the pool back to the release it ran before (paused first if Active).`,
    columns: [
      { name: 'Pool', type: 'string', jsonPath: '.spec.pool' },
      { name: 'Release', type: 'string', jsonPath: '.spec.target.version' },
      { name: 'Phase', type: 'string', jsonPath: '.status.phase' },
      { name: 'Progress', type: 'string', jsonPath: '.status.progress' },
      { name: 'Failed', type: 'integer', jsonPath: '.status.failed' },
      message('Progressing'),
      age,
    ],
    spec: written.rolloutSpec,
    status: written.rolloutStatus,
  },
  {
    kind: 'Channel',
    plural: 'channels',
    shortName: 'mch',
    category: true,
    about:
      'A channel the pools follow, mirrored by the operator: its latest release and the pools on it.',
    columns: [
      { name: 'Latest', type: 'string', jsonPath: '.status.latest.version' },
      { name: 'Pools', type: 'string', jsonPath: '.status.poolList' },
      age,
    ],
    spec: written.channelSpec,
    status: written.channelStatus,
  },
  {
    kind: 'NodeUpgrade',
    plural: 'nodeupgrades',
    shortName: 'mnu',
    category: true,
    about:
      'One machine, mirrored by the operator: the release it booted, the one it is going to, and where its upgrade is.',
    columns: [
      { name: 'Pool', type: 'string', jsonPath: '.spec.pool' },
      { name: 'Role', type: 'string', jsonPath: '.spec.role' },
      { name: 'Booted', type: 'string', jsonPath: '.status.booted.version' },
      { name: 'Target', type: 'string', jsonPath: '.status.target.version' },
      { name: 'Phase', type: 'string', jsonPath: '.status.phase' },
      { name: 'Agent', type: 'string', jsonPath: '.status.agentPhase', priority: 1 },
      age,
    ],
    spec: written.nodeUpgradeSpec,
    status: written.nodeUpgradeStatus,
  },
  {
    kind: 'Pool',
    plural: 'pools',
    shortName: 'mpool',
    category: true,
    about: `A pool declared as a resource (docs/adr/0011): the same fields as a fleet file's pool, its name the object's. The schema and CEL rules refuse on \`kubectl apply\` what they can say (shapes, durations, percentages, cron fields, time-zone names, a channel or a promotion); the operator checks the rest (a cron expression's values, a time zone's existence, promotion cycles) and says so in the Accepted condition. Deleting a pool cancels its rollouts; the operator's finalizer keeps the object until no machine of it is in flight, so no node is left cordoned.`,
    columns: [
      { name: 'Channel', type: 'string', jsonPath: '.spec.channel' },
      { name: 'Promotes', type: 'string', jsonPath: '.spec.promoteFrom' },
      { name: 'Machines', type: 'integer', jsonPath: '.status.machines' },
      { name: 'Rollout', type: 'string', jsonPath: '.status.rollout' },
      { name: 'Accepted', type: 'string', jsonPath: condition('Accepted', 'status') },
      message('Accepted'),
      age,
    ],
    spec: poolSchema,
    omit: ['name'],
    overlay: shapes.pool,
    status: written.poolStatus,
  },
  {
    kind: 'MachineHold',
    plural: 'machineholds',
    shortName: 'mhold',
    category: true,
    about: `A hold on one machine declared as a resource (docs/adr/0011): no upgrade starts on it until \`until\`, or until the object is deleted — or, with \`version\`, a pin: the machine stays on that release. A person's own hold (\`molt machine hold\`) on the same machine is left alone.`,
    columns: [
      { name: 'Machine', type: 'string', jsonPath: '.spec.machine' },
      { name: 'Until', type: 'string', jsonPath: '.spec.until' },
      { name: 'Pin', type: 'string', jsonPath: '.spec.version' },
      { name: 'Accepted', type: 'string', jsonPath: condition('Accepted') },
      { name: 'Reason', type: 'string', jsonPath: '.spec.reason' },
      age,
    ],
    spec: MachineHoldSpec,
    overlay: shapes.machineHold,
    status: written.machineHoldStatus,
    specRequired: true,
  },
  {
    kind: 'KubernetesCluster',
    plural: 'kubernetesclusters',
    shortName: 'mkc',
    category: true,
    about: `A cluster's Kubernetes as configuration (docs/adr/0012): the version its control plane runs and each component's flags. The object's name is the cluster's (the name machines give as \`cluster\`, \`default\` when they give none). Changing spec.version makes the operator run a recorded upgrade plan (checks first; a failing step rolls back by itself); \`molt cluster kubernetes status\` shows every control-plane machine's components and the plan. The same spec as the fleet file's clusters[].kubernetes; status says whether the operator accepted it.`,
    columns: [
      { name: 'Version', type: 'string', jsonPath: '.spec.version' },
      {
        ...{ name: 'Desired', type: 'string', jsonPath: '.status.desired.version' },
        description: 'the version in force (a person’s request may hold against the spec)',
      },
      { name: 'Plan', type: 'string', jsonPath: '.status.plan.phase' },
      { name: 'Progress', type: 'string', jsonPath: '.status.plan.progress' },
      { name: 'Accepted', type: 'string', jsonPath: condition('Accepted') },
      { name: 'By', type: 'string', jsonPath: '.status.desired.by', priority: 1 },
      message('Accepted'),
      age,
    ],
    spec: KubernetesClusterSpec,
    overlay: shapes.kubernetesCluster,
    status: written.kubernetesClusterStatus,
    specRequired: true,
  },
  {
    kind: 'ImagePolicy',
    plural: 'imagepolicies',
    shortName: 'mimg',
    category: true,
    about: `An image policy (docs/adr/0013): which workloads' containers follow which image repository and tag tier, rolled out by digest under pool-style policies. The same schema as the fleet file's \`images:\` item; the operator checks the rest and says so in the Accepted condition. A selector looks in the namespaces it names (["*"]: every namespace, written out), else those its names qualify (shop/web); one naming neither is refused (Accepted=False, MOLT_IMAGE_POLICY_NAMESPACES) — this object's own namespace is the operator's, never a default.`,
    columns: [
      { name: 'Repository', type: 'string', jsonPath: '.spec.repository' },
      { name: 'Accepted', type: 'string', jsonPath: condition('Accepted') },
      { name: 'Following', type: 'string', jsonPath: condition('Following') },
      { name: 'GM-Missing', type: 'string', jsonPath: condition('GMImageMissing', 'status') },
      message('Accepted'),
      age,
    ],
    spec: imagePolicySchema,
    omit: ['name'],
    overlay: shapes.imagePolicy,
    status: written.imagePolicyStatus,
  },
  {
    kind: 'OperatorRecord',
    plural: 'operatorrecords',
    shortName: 'mrec',
    category: false,
    about: `The operator's own state when its config says \`store: kubernetes\` (docs/adr/0016): machines, rollouts with their start records, holds, blocked releases, history pages, notification cursors, Kubernetes plans and FleetLock semaphores, one record each, in the operator's namespace. Only the operator writes them (deploy/kubernetes/operator-rbac.yaml); \`data\` is the JSON the etcd store keeps under the same key. Not in the \`molt\` category: \`kubectl get molt\` shows the mirrored resources people read; \`kubectl get operatorrecords\` shows these.`,
    columns: [
      { name: 'Kind', type: 'string', jsonPath: '.spec.kind' },
      { name: 'Key', type: 'string', jsonPath: '.spec.key' },
      age,
    ],
    spec: written.operatorRecordSpec,
    specRequired: true,
  },
];
