// SPDX-License-Identifier: Apache-2.0
/**
 * A machine's own configuration, `state/config.yaml` (docs/adr/0004 §2): what the agent reads at
 * start, and what `molt lab machine` (or an installer) writes. The schema lives here so writers are
 * typed by it too (`MachineConfigInput`); reading the file is the agent's (agent/config.ts).
 */
import { z } from 'zod';
import { ControlPlaneConfig } from './machine-config-control-plane.ts';
import { NetworkConfig } from './machine-config-network.ts';
import { KubernetesNodeConfig } from './machine-config-node.ts';
import { Bootloaders } from '../core/boot/bootloaders.ts';
import { DrainTimeoutActions } from '../core/drain/pods.ts';

const EtcdConfig = z
  .object({
    /** Member name (unique in the cluster). */
    name: z.string().min(1),
    peerUrl: z.url(),
    clientUrl: z.url(),
    /** `name=peerUrl,…` of the cluster this member first joins. */
    initialCluster: z.string().min(1),
    /** Client URLs of every member, for quorum checks and the lease. */
    endpoints: z.array(z.url()).min(1),
    /** Lab machines: the etcd binary to run. @default /usr/bin/etcd (Debian's) */
    binary: z.string().min(1).optional(),
    /**
     * The `etcdutl` that restores a snapshot (`molt cluster recover`, docs/adr/0012 §6).
     * @default `etcdutl` beside `binary` (/usr/bin/etcdutl)
     */
    etcdutl: z.string().min(1).optional(),
  })
  .strict();

/**
 * A machine that boots from a disk molt installed (docs/real-machines.md): its slots are
 * partitions, EPHEMERAL a mounted filesystem, its services systemd units. Without this section the
 * machine is a lab machine (slots are files under the root).
 */
const DiskConfig = z
  .object({
    /** Block devices of the two slots. @default /dev/disk/by-partlabel/molt-a and molt-b */
    slots: z
      .object({ A: z.string().min(1), B: z.string().min(1) })
      .strict()
      .default({ A: '/dev/disk/by-partlabel/molt-a', B: '/dev/disk/by-partlabel/molt-b' }),
    /** Mount point of EPHEMERAL, unmounted before the reboot. @default /molt/ephemeral */
    ephemeral: z.string().min(1).default('/molt/ephemeral'),
    /**
     * systemd units stopped (in reverse order) before the reboot and started (in order) after it.
     * @default control-plane: etcd.service, containerd.service, molt-kube-pods.service,
     * kubelet.service; worker: the last three — those present
     */
    units: z.array(z.string().regex(/^[A-Za-z0-9:_.@-]+$/, 'a systemd unit name')).optional(),
  })
  .strict();
export type DiskConfig = z.infer<typeof DiskConfig>;

/** Who may ask a machine for `force-delete` drains (`kubernetes.drain.forceDelete`). */
export const ForceDeletePolicy = z.enum(['deny', 'admin', 'allow']);
export type ForceDeletePolicy = z.infer<typeof ForceDeletePolicy>;

const KubernetesConfig = z
  .object({
    /**
     * kubeconfig of this machine's own agent identity, `molt:agent:<node>` in group `molt:agents`
     * (deploy/kubernetes/rbac.yaml: role molt-agent, confined to that Node by its admission policy).
     */
    kubeconfig: z.string().min(1),
    /** This machine's Node name. @default the machine's `node` */
    nodeName: z.string().min(1).optional(),
    drain: z
      .object({
        timeoutSeconds: z.number().int().positive().default(600),
        onTimeout: z.enum(DrainTimeoutActions).default('abort-and-uncordon'),
        deleteEmptyDirData: z.boolean().default(false),
        force: z.boolean().default(false),
        /**
         * Who may ask this machine, in an upgrade request, for `onTimeout: force-delete` (deleting
         * pods past their PodDisruptionBudgets with grace 0) when this config does not choose it
         * itself: `deny` nobody, `admin` an admin certificate only, `allow` operator certificates
         * too (a fleet file's rollout drain policy). The operator cannot override it.
         * @default 'admin'
         */
        forceDelete: ForceDeletePolicy.optional(),
      })
      .strict()
      .default({
        timeoutSeconds: 600,
        onTimeout: 'abort-and-uncordon',
        deleteEmptyDirData: false,
        force: false,
      }),
    /**
     * Write the agent's API endpoint into this Node's annotation `molt.dev/agent-endpoint`, for an
     * operator that takes its machines from the cluster's Nodes (docs/adr/0011): `true` the URL
     * the API listens on, or the URL to give (behind NAT, a load balancer). @default false
     */
    advertise: z
      .union([z.boolean(), z.url({ protocol: /^https$/, message: 'must be an https:// URL' })])
      .optional(),
    /**
     * Lab machines only (under `molt lab machine`): the agent also plays the kubelet's API role for
     * its node with this kubeconfig of the node's identity (`system:node:<name>`).
     */
    labKubelet: z
      .object({ kubeconfig: z.string().min(1) })
      .strict()
      .optional(),
    /**
     * A real node: its kubelet and containerd join the cluster by TLS bootstrap
     * (machine-config-node.ts); the Node's name is the machine's `node`.
     */
    node: KubernetesNodeConfig.optional(),
  })
  .strict();
export type KubernetesConfig = z.infer<typeof KubernetesConfig>;

export const MachineConfig = z
  .object({
    node: z.string().regex(/^[a-z0-9]([-a-z0-9.]{0,61}[a-z0-9])?$/, 'a DNS-1123 name'),
    role: z.enum(['control-plane', 'worker']),
    bootloader: z.enum(Bootloaders),
    api: z
      .object({
        host: z.string().default('127.0.0.1'),
        port: z.number().int().min(0).max(65535).default(0),
      })
      .strict()
      .default({ host: '127.0.0.1', port: 0 }),
    healthDeadlineSeconds: z.number().int().positive().default(300),
    /**
     * Deadline of one image pull, whatever the registry does (a stream that never ends, a stall
     * just under the idle timeout); past it the pull fails with MOLT_PULL_DEADLINE.
     */
    pullTimeoutSeconds: z.number().int().positive().default(1800),
    /** How long the cluster upgrade lease survives a reboot without its holder. */
    rebootLeaseSeconds: z.number().int().positive().default(600),
    leaseTtlSeconds: z.number().int().positive().default(30),
    registry: z
      .object({
        /** Plain-HTTP registries (the lab's). */
        insecure: z.boolean().default(false),
        /**
         * The registry `username` and `password` belong to: `host[:port]` as release and bundle
         * references name it. They are sent to no other host a reference names (nor to a mirror
         * but this host's), and to its token service only over https on its own host. Without
         * it they are sent to no registry at all.
         */
        host: z.string().min(1).optional(),
        username: z.string().optional(),
        password: z.string().optional(),
        /**
         * Token-service hosts besides `host` itself that may receive the password, over https
         * (Docker Hub's `auth.docker.io`). @default []
         */
        tokenRealms: z.array(z.string().min(1)).default([]),
        /**
         * Registry hosts reached at another address (`host[:port]` → `host[:port]`), as a
         * container runtime's mirrors: a VM reaches its host's loopback registry at 10.0.2.2.
         * Image references keep the name the release was published under.
         */
        mirrors: z.record(z.string().min(1), z.string().min(1)).default({}),
      })
      // Credentials without `host` (or a lone username or password) are valid, as they were
      // before `host` existed: an agent that refused to start would leave the machine
      // unmanageable. They are sent nowhere; the agent warns at start, and a registry that asks
      // for them gets MOLT_REGISTRY_CREDENTIALS_WITHHELD naming the key to set.
      .strict()
      .default({ insecure: false, mirrors: {}, tokenRealms: [] }),
    /** PEM public key installer images must be signed with (cosign `.sig` or bundle). */
    publicKeyFile: z.string().optional(),
    /** Largest installer image accepted, in bytes. */
    maxImageBytes: z
      .number()
      .int()
      .positive()
      .default(2 * 1024 ** 3),
    etcd: EtcdConfig.optional(),
    /** The machine is a Kubernetes node: cordon, drain and uncordon it around upgrades. */
    kubernetes: KubernetesConfig.optional(),
    controlPlane: ControlPlaneConfig.optional(),
    disk: DiskConfig.optional(),
    /** Static addresses and routes (machine-config-network.ts); other NICs keep DHCP. */
    network: NetworkConfig.optional(),
  })
  .strict()
  .refine((c) => c.role === 'worker' || c.etcd !== undefined, {
    message: 'a control-plane machine needs an etcd section',
    path: ['etcd'],
  })
  .refine((c) => c.controlPlane === undefined || c.etcd !== undefined, {
    message: 'only a control-plane machine (with an etcd section) runs control-plane components',
    path: ['controlPlane'],
  });
export type MachineConfig = z.infer<typeof MachineConfig>;
export type MachineConfigInput = z.input<typeof MachineConfig>;
export type { ComponentConfig, ControlPlaneConfig } from './machine-config-control-plane.ts';
