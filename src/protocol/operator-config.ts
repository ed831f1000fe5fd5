// SPDX-License-Identifier: Apache-2.0
/**
 * `molt operator --config FILE` (docs/adr/0005 §4): where releases come from, where state lives,
 * the operator's identity, and the fleet file (pools, policies, machines with their agents'
 * endpoints — the format `molt plan` reads). Paths are relative to the config file.
 *
 * ```yaml
 * registry: 127.0.0.1:5000
 * repository: acme/installer
 * insecure: true                 # plain HTTP to the registry (loopback labs only)
 * fleet: fleet.yaml
 * publicKey: release.pub         # releases and Kubernetes bundles must be signed with it
 * bundleRepositories: [acme/k8s] # besides <repository>-kubernetes, for KubernetesCluster specs
 * pki: {ca: pki/ca.pem, cert: pki/operator.pem, key: pki/operator.key}
 * store: {etcd: ["http://127.0.0.1:2379"]}   # or: memory (state lost on restart; tests, demos),
 *                                # or: kubernetes (OperatorRecords in the cluster; store-config.ts)
 * id: operator-1                 # leader-election identity; default: hostname-pid
 * interval: 2s                   # reconcile period
 * discoverEvery: 5s
 * resync: 60s                    # the longest a machine whose event stream is open and quiet
 *                                # goes unasked (each one's period spread over 30–60 s)
 * unreachableFail: 15m           # an in-flight machine away this long has failed
 * leaderTtl: 10s                 # how long a dead leader blocks a standby
 * gateGrace: 5m                  # after an upgrade, how long the pool's health gates may fail
 *                                # before the machine is rolled back through its agent
 * listen: {host: 127.0.0.1, port: 7443}   # the operator API (mTLS); port 0 picks a free one
 * fleetLock:                     # FleetLock (docs/adr/0005 "FleetLock")
 *   ttl: 1h                      # default: a slot its holder does not renew is freed after 1h
 *   groups: {workers: {ttl: 30m}}   # per group (= pool) TTLs
 *   listen: {host: 10.0.0.1, port: 8443}   # a listener for clients without a fleet certificate
 *   tls: true                    # default: TLS with the API's server certificate; false: HTTP
 *   clients:                     # required with listen: the only ids it serves
 *     - {id: 8d3f0c6a2b1e4f5a9c7d6e5f4a3b2c1d, group: workers, tokenSha256: <64 hex>}
 * dashboard:                     # the web dashboard, for browsers (no client certificate)
 *   listen: {host: 127.0.0.1, port: 8080}  # loopback or a management network
 *   tls: false                   # default: plain HTTP; true: TLS with the API's server certificate
 *   anonymousRead: false         # default: every read needs a signed-in user; true: anyone reads
 *   sessionTtl: 8h               # how long a sign-in lasts
 *   users:                       # who may sign in (`molt pki dashboard-token` prints the line)
 *     - {name: alice, role: operator, tokenSha256: <64 hex>}   # viewer, operator or admin
 *   oidc:                        # single sign-on besides tokens (OpenID Connect, code + PKCE)
 *     issuer: https://login.example.com/dex
 *     clientId: molt-dashboard
 *     clientSecretFile: oidc-secret   # relative to this file; absent: a public client
 *     redirectUrl: https://molt.example.com:8080/v1/session/oidc/callback
 *     roles: [{group: sre, role: operator}]   # group → role, the highest wins
 * health: {listen: {host: 0.0.0.0, port: 8081}}   # probes, plain HTTP: GET /healthz, /readyz
 * selfRegistration:              # which nodes may register themselves (none by default)
 *   - nodes: ["w-*"]             # node certificate names (CN): exact, or globs
 *     pool: workers              # the pool they may join
 *     role: worker               # default worker
 *     cluster: lab               # default: none — a registration must name exactly this
 *     labels: {zone: [a, b]}     # label keys they may set, with the values allowed (globs)
 * notifications:                 # webhooks: every transition, POSTed to each sink (docs/adr/0009)
 *   - name: ops-hook             # letters, digits, . _ - : the sink's cursor and metric label
 *     url: https://hooks.example.com/molt
 *     format: json               # default; slack: {text, blocks} for a Slack incoming webhook
 *     secretFile: webhook.secret # HMAC-SHA256 key (mode 0600): X-Molt-Signature; none: unsigned
 *     events: ["rollout.*", "machine.failed", "machine.rolled-back"]   # globs; default ["*"]
 *     timeout: 10s               # per attempt (default); retried with backoff, then dropped
 * kubernetes:                    # the fleet is a Kubernetes cluster (docs/adr/0006 §9)
 *   kubeconfig: operator.kubeconfig   # deploy/kubernetes/operator-rbac.yaml's identity; default:
 *                                # the pod's service account (the operator runs in the cluster)
 *   namespace: molt-system       # where the status mirror, its Events and the Lease live
 *   leaderElection: true         # default: a coordination Lease instead of the store's claim
 *   status: true                 # default: mirror rollouts, channels, machines into molt.dev CRs
 *   declared: true               # default: also read Pools, MachineHolds and Rollout actions
 *                                # from molt.dev objects (docs/adr/0011); machines of the fleet
 *                                # file may then name pools only declared there
 *   nodes: {cluster: prod, agentPort: 7443}   # machines from Nodes labelled
 *                                # node-restriction.kubernetes.io/molt-pool=<pool> too (agent
 *                                # at the molt.dev/agent-endpoint annotation, else
 *                                # InternalIP:agentPort); off by default
 * ```
 *
 * With `listen`, `pki` also names the API's server certificate, `serverCert` and `serverKey`: a
 * certificate from `molt pki issue --role node --name <operator> --san <host>` (node certificates
 * are the TLS server kind; they name localhost and 127.0.0.1 by themselves). `cert`/`key` stay the
 * operator's client identity toward the agents. Without `listen` the operator serves no API.
 */
import { z } from 'zod';
import { CapiConfig } from './capi-config.ts';
import { duration, listenAddress } from './config-parts.ts';
import { DashboardConfig } from './dashboard-config.ts';
import { StoreConfig } from './store-config.ts';

/**
 * One `selfRegistration` rule: nodes whose certificate name matches one of `nodes` may register
 * themselves (`POST /v1/machines` with their node certificate) into `pool`, with this `role` and
 * `cluster` exactly, and only with the label keys listed, each value matching one of its globs.
 * Operators and admins register any machine; nodes no rule names may not register at all.
 */
export const SelfRegistrationRule = z.strictObject({
  nodes: z.array(z.string().min(1)).min(1, 'name at least one node (or a glob like w-*)'),
  pool: z.string().min(1),
  role: z.enum(['control-plane', 'worker']).default('worker'),
  cluster: z.string().min(1).optional(),
  labels: z.record(z.string(), z.array(z.string().min(1)).min(1)).default({}),
});
export type SelfRegistrationRule = z.output<typeof SelfRegistrationRule>;

/** One id the anonymous FleetLock listener serves (`fleetlock-callers.ts`). */
const FleetLockClientConfig = z.strictObject({
  /** Zincati's `client_params.id` (its app-specific machine id, or `[identity] node_uuid`). */
  id: z.string().min(1).max(256),
  group: z.string().regex(/^[a-zA-Z0-9.-]+$/, 'a FleetLock group (letters, digits, . -)'),
  /** SHA-256 (lower-case hex) of the client's token; the token itself stays with the client. */
  tokenSha256: z
    .string()
    .regex(/^[0-9a-f]{64}$/, 'the lower-case hex SHA-256 of the token (`sha256sum`)')
    .optional(),
});

/** `fleetLock`: slot TTLs, and the listener for clients without a certificate. */
const FleetLockConfig = z
  .strictObject({
    /** How long a slot lasts without its holder renewing it (pre-reboot again). */
    ttl: duration.default(60 * 60_000),
    /** Per group (pool) settings. */
    groups: z.record(z.string(), z.strictObject({ ttl: duration })).default({}),
    listen: listenAddress.optional(),
    tls: z.boolean().default(true),
    clients: z.array(FleetLockClientConfig).optional(),
  })
  .superRefine((f, ctx) => {
    if (f.listen !== undefined && f.clients === undefined)
      ctx.addIssue({
        code: 'custom',
        path: ['clients'],
        message: 'required with listen: the ids the listener serves (FleetLock has no auth)',
      });
    const seen = new Set<string>();
    for (const [i, c] of (f.clients ?? []).entries()) {
      if (seen.has(c.id))
        ctx.addIssue({ code: 'custom', path: ['clients', i, 'id'], message: 'listed twice' });
      seen.add(c.id);
    }
  });

/**
 * One `notifications` sink (docs/adr/0009): the operator POSTs every history event whose kind
 * (`protocol/notifications.ts`) matches one of `events` to `url`, signed when `secretFile` names
 * the shared secret. Which globs match no kind at all is checked when the config is loaded.
 */
export const NotificationSinkConfig = z.strictObject({
  name: z
    .string()
    .regex(/^[a-zA-Z0-9][a-zA-Z0-9._-]{0,62}$/, 'letters, digits, . _ - (at most 63)'),
  url: z.url({ protocol: /^https?$/, error: 'an http:// or https:// URL' }),
  format: z.enum(['json', 'slack']).default('json'),
  /** A file holding the HMAC key (its bytes, a trailing newline dropped); mode 0600. */
  secretFile: z.string().min(1).optional(),
  events: z.array(z.string().min(1)).min(1, 'name at least one event kind or glob').default(['*']),
  /** One attempt's deadline. */
  timeout: duration.default(10_000),
});
export type NotificationSinkConfig = z.output<typeof NotificationSinkConfig>;

const notifications = z
  .array(NotificationSinkConfig)
  .default([])
  .superRefine((sinks, ctx) => {
    const seen = new Set<string>();
    for (const [i, sink] of sinks.entries()) {
      if (seen.has(sink.name))
        ctx.addIssue({ code: 'custom', path: [i, 'name'], message: 'listed twice' });
      seen.add(sink.name);
    }
  });

export const OperatorConfig = z
  .strictObject({
    registry: z.string().min(1),
    repository: z.string().min(1),
    insecure: z.boolean().default(false),
    /** PEM file with the public key releases (and Kubernetes bundles) must be signed with. */
    publicKey: z.string().min(1).optional(),
    fleet: z.string().min(1),
    /**
     * Repositories of `registry`, besides `<repository>-kubernetes`, that a KubernetesCluster's
     * `bundleRepository` may name; bundles are held to `publicKey` as releases are. @default none
     */
    bundleRepositories: z.array(z.string().min(1).max(512)).default([]),
    pki: z.strictObject({
      ca: z.string().min(1),
      cert: z.string().min(1),
      key: z.string().min(1),
      serverCert: z.string().min(1).optional(),
      serverKey: z.string().min(1).optional(),
    }),
    /** Where the operator's state lives (`store-config.ts`). */
    store: StoreConfig,
    id: z.string().min(1).optional(),
    interval: duration.default(2_000),
    discoverEvery: duration.default(5_000),
    resync: duration.default(60_000),
    unreachableFail: duration.default(15 * 60_000),
    leaderTtl: duration.default(10_000),
    gateGrace: duration.default(5 * 60_000),
    listen: listenAddress.optional(),
    fleetLock: FleetLockConfig.optional(),
    /** The dashboard: a listener for browsers (no client certificate; `dashboard-config.ts`). */
    dashboard: DashboardConfig.optional(),
    /** The probe listener (plain HTTP, `/healthz` and `/readyz` only; `health-server.ts`). */
    health: z.strictObject({ listen: listenAddress }).optional(),
    /** Which nodes may register themselves, into what; none by default. */
    selfRegistration: z.array(SelfRegistrationRule).default([]),
    /** Webhook sinks every transition is sent to; none by default. */
    notifications,
    /** molt as a Cluster API in-place update extension: capi-config.ts. */
    capi: CapiConfig.optional(),
    kubernetes: z
      .strictObject({
        /** Default: the pod's service account, for an operator running in the cluster. */
        kubeconfig: z.string().min(1).optional(),
        namespace: z
          .string()
          .regex(/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/, 'a namespace name (DNS-1123 label)')
          .default('molt-system'),
        leaderElection: z.boolean().default(true),
        status: z.boolean().default(true),
        /** Read pools, holds and rollout actions from molt.dev objects (docs/adr/0011). */
        declared: z.boolean().default(true),
        /**
         * Take machines from the cluster's Nodes labelled `node-restriction.kubernetes.io/molt-pool`
         * too — a label no node can set on itself (docs/adr/0011, 0006 §13):
         * needs `declared` and list on nodes (deploy/kubernetes/operator-rbac.yaml).
         */
        nodes: z
          .strictObject({
            cluster: z.string().min(1).optional(),
            agentPort: z.number().int().min(1).max(65535).optional(),
          })
          .optional(),
      })
      .optional(),
  })
  .superRefine((c, ctx) => {
    const why =
      c.listen !== undefined
        ? 'listen'
        : c.fleetLock?.listen !== undefined && c.fleetLock.tls
          ? 'fleetLock.tls'
          : c.dashboard?.tls === true
            ? 'dashboard.tls'
            : c.capi !== undefined
              ? 'capi'
              : undefined;
    if (why === undefined) return;
    for (const field of ['serverCert', 'serverKey'] as const)
      if (c.pki[field] === undefined)
        ctx.addIssue({
          code: 'custom',
          path: ['pki', field],
          message: `required with ${why}: the API's certificate (\`molt pki issue --role node\`)`,
        });
  });
export type OperatorConfig = z.output<typeof OperatorConfig>;
/** The operator config as written (durations as text, defaults not applied yet). */
export type OperatorConfigInput = z.input<typeof OperatorConfig>;
