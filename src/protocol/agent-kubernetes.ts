// SPDX-License-Identifier: Apache-2.0
/**
 * The agent's control-plane and recovery contract (docs/adr/0012): the Kubernetes components a
 * control-plane machine renders and supervises from the cluster's configuration, the bundle they
 * come from, and the service and etcd endpoints that recover a cluster with Kubernetes down.
 * Field names are a public contract: add fields, never rename them. Bodies are `.strict()`.
 *
 * Who may call what (agent/api): every GET is `read`; pre-pull, component apply and handing etcd
 * leadership over are `operate` (the operator's upgrade plans do them); everything else under
 * services/ and etcd/ — restarts, snapshots (the whole cluster's data), membership, restore — is
 * `force` (admin certificates only).
 */
import { z } from 'zod';
import { ErrorCode } from '../core/errors.ts';
import { controlCharacter } from '../core/kubernetes/insecure-flags.ts';

export const KubernetesRoutes = {
  /** GET: {@link ControlPlaneView} — every component's version, hash and health, and the bundles staged. */
  kubernetes: '/v1/kubernetes',
  /** POST {@link PrepullBody} → {@link StagedBundle}: pull and verify a bundle; restarts nothing. */
  prepull: '/v1/kubernetes/prepull',
  /**
   * POST {@link ComponentApplyBody} → {@link ComponentView}: render the component from the body and
   * the machine's own facts; when its hash changed, stage the bundle if needed, restart it and
   * answer once it is healthy (or fail `MOLT_KUBE_COMPONENT_UNHEALTHY` with its log's tail, the
   * previous spec left recorded so a second apply of it restores it). Idempotent.
   */
  component: (name: KubeComponentName): string => `/v1/kubernetes/components/${name}`,
  /** GET: {@link ServiceView}[] — etcd and the components, running or not. */
  services: '/v1/services',
  /** POST {} → {@link ServiceView}: stop and start one service (admin). */
  serviceRestart: (name: string): string => `/v1/services/${encodeURIComponent(name)}/restart`,
  /** POST {} → {@link ServiceView}: stop one service (admin); stopping a stopped one succeeds. */
  serviceStop: (name: string): string => `/v1/services/${encodeURIComponent(name)}/stop`,
  /** POST {} → {@link ServiceView}: start one service (admin); starting a running one succeeds. */
  serviceStart: (name: string): string => `/v1/services/${encodeURIComponent(name)}/start`,
  /** GET `?tail=<n>&follow=true`: the service's output as text/plain lines (bounded tail). */
  serviceLogs: (name: string): string => `/v1/services/${encodeURIComponent(name)}/logs`,
  /** GET: {@link EtcdMemberView}[] as this machine's member sees the cluster. */
  etcdMembers: '/v1/etcd/members',
  /** POST {} → application/octet-stream: a snapshot of the cluster's data (admin). */
  etcdSnapshot: '/v1/etcd/snapshot',
  /** POST {@link ForfeitBody} → {@link ForfeitAnswer}: hand leadership to another member (operator, admin). */
  etcdForfeit: '/v1/etcd/forfeit-leadership',
  /** POST {} → {@link EtcdMemberView}[]: remove a member by its hex id (admin). */
  etcdRemove: (id: string): string => `/v1/etcd/members/${encodeURIComponent(id)}/remove`,
  /**
   * POST application/octet-stream (a snapshot) → {@link EtcdMemberView}[]: stop the components and
   * etcd, keep the old data directory aside (never deleted), restore the snapshot as a new
   * one-member cluster with a new cluster token, start etcd and the components (admin).
   */
  etcdRestore: '/v1/etcd/restore',
  /**
   * POST {} → {@link EtcdMemberView}[]: stop the components and etcd, keep the old data directory
   * aside, join the cluster the other endpoints serve as a new member, start the components (admin).
   */
  etcdRejoin: '/v1/etcd/rejoin',
} as const;

export const KubeComponentName = z.enum([
  'kube-apiserver',
  'kube-controller-manager',
  'kube-scheduler',
]);
export type KubeComponentName = z.infer<typeof KubeComponentName>;
/** The order components are upgraded in on one machine (and rolled back in reverse). */
export const KubeComponentOrder: readonly KubeComponentName[] = KubeComponentName.options;

/** `v1.36.3` — the form Kubernetes' own `/version` reports and its release tags use. */
export const KubeVersion = z
  .string()
  .regex(/^v1\.\d{1,3}\.\d{1,3}$/, 'must be a Kubernetes version like v1.36.3');
/** `1.35` — a `--emulated-version` (KEP-4330): the minor a newer binary behaves as. */
export const KubeMinor = z.string().regex(/^1\.\d{1,3}$/, 'must be a minor version like 1.35');

/**
 * `--flag=value` settings by flag name without dashes; a flag molt itself sets is refused. A value
 * is one line of text: a control character (a newline) would break the component's unit.
 */
export const ExtraArgs = z
  .record(
    z.string().regex(/^[a-z0-9][a-z0-9-]{0,62}$/, 'a flag name without dashes'),
    z
      .string()
      .max(4096)
      .refine((v) => !controlCharacter.test(v), {
        message: 'must not hold a control character (a newline, a tab …)',
        params: { code: ErrorCode.KubeFlagInvalid },
      }),
  )
  .refine((r) => Object.keys(r).length <= 64, 'at most 64 flags');
export type ExtraArgs = z.infer<typeof ExtraArgs>;

/** A bundle by digest: `host/repo@sha256:<64 hex>` (the operator resolves tags before it asks). */
export const BundleRef = z
  .string()
  .max(1024)
  .regex(/^[^@\s]+@sha256:[0-9a-f]{64}$/, 'must be a reference by digest (repo@sha256:…)');

export const PrepullBody = z.strictObject({ bundle: BundleRef });
export type PrepullBody = z.infer<typeof PrepullBody>;

export const ComponentApplyBody = z.strictObject({
  /** The bundle's version (checked against the bundle's own annotation). */
  version: KubeVersion,
  bundle: BundleRef,
  emulatedVersion: KubeMinor.optional(),
  extraArgs: ExtraArgs.default({}),
});
export type ComponentApplyBody = z.infer<typeof ComponentApplyBody>;

export const StagedBundle = z.object({
  bundle: z.string(),
  version: KubeVersion,
  /** Where its binaries are on the machine. */
  dir: z.string(),
});
export type StagedBundle = z.infer<typeof StagedBundle>;

export const ComponentView = z.object({
  name: KubeComponentName,
  /** What the machine runs (from the bundle's annotation; the machine's initial binaries' otherwise). */
  version: z.string().optional(),
  bundle: z.string().optional(),
  emulatedVersion: z.string().optional(),
  /** sha256 of the rendered spec (binary digest, arguments, environment): what changed restarts. */
  hash: z.string(),
  running: z.boolean(),
  healthy: z.boolean(),
  pid: z.number().int().optional(),
  /** ISO time the running process started. */
  since: z.string().optional(),
  message: z.string().optional(),
});
export type ComponentView = z.infer<typeof ComponentView>;

export const ControlPlaneView = z.object({
  components: z.array(ComponentView),
  staged: z.array(StagedBundle),
});
export type ControlPlaneView = z.infer<typeof ControlPlaneView>;

export const ServiceView = z.object({
  name: z.string(),
  running: z.boolean(),
  pid: z.number().int().optional(),
  since: z.string().optional(),
});
export type ServiceView = z.infer<typeof ServiceView>;

export const EtcdMemberView = z.object({
  /** Hex member id, as etcdctl prints it. */
  id: z.string(),
  name: z.string(),
  peerUrls: z.array(z.string()),
  clientUrls: z.array(z.string()),
  isLeader: z.boolean(),
  isLearner: z.boolean(),
  /** The answering machine's own member (by name or peer URL). */
  self: z.boolean().optional(),
});
export type EtcdMemberView = z.infer<typeof EtcdMemberView>;

/** Hand leadership to `to` (hex id), or to the most caught-up other voting member. */
export const ForfeitBody = z.strictObject({ to: z.string().max(32).optional() });
export type ForfeitBody = z.infer<typeof ForfeitBody>;
export const ForfeitAnswer = z.object({
  /** The leader after the call (unchanged when this member did not lead). */
  leader: z.string(),
  moved: z.boolean(),
});
export type ForfeitAnswer = z.infer<typeof ForfeitAnswer>;

/**
 * How long a restore may take to answer: the agent stops the machine's services, restores, and
 * starts etcd and the control plane again, each within its own bound (a slow machine's API server
 * takes minutes). The agent keeps the connection open as long.
 */
export const RestoreAnswerMs = 30 * 60_000;

/** Largest etcd snapshot `POST /v1/etcd/restore` accepts (etcd's default quota is 2 GiB). */
export const MaxSnapshotBytes = 8 * 1024 ** 3;
/** Most log lines `GET /v1/services/:name/logs?tail=` returns before following. */
export const MaxLogTail = 10_000;
