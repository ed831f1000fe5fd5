// SPDX-License-Identifier: Apache-2.0
/**
 * A control-plane machine's `controlPlane` section of its config (machine-config.ts): the
 * Kubernetes components it renders and supervises, its cluster's PKI on STATE, and whether it
 * bootstraps its cluster for the nodes that join it.
 */
import { z } from 'zod';
import { KubeVersion } from './agent-kubernetes.ts';

/** One control-plane component as this machine runs it: the flags only the machine knows. */
const ComponentConfig = z
  .object({
    /**
     * Its base flags, `--flag=value` or `--flag`: files, addresses, ports, etcd endpoints. The
     * cluster's extra flags are added after them and may not override them (docs/adr/0012 §3).
     */
    args: z
      .array(
        z
          .string()
          .regex(/^--[a-z0-9][a-z0-9-]*(=[\s\S]*)?$/, 'must be a flag: --name=value or --name'),
      )
      .min(1),
    /** The secure port on 127.0.0.1 its health is checked on (`/readyz`, or `/healthz`). */
    port: z.number().int().min(1).max(65535),
    /** Its environment (nothing else of the agent's is passed on). @default {} */
    env: z
      .record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'a variable name'), z.string())
      .default({}),
  })
  .strict();
export type ComponentConfig = z.infer<typeof ComponentConfig>;

/**
 * The Kubernetes control-plane components this machine renders and supervises (docs/adr/0012 §3,
 * docs/kubernetes.md): each started after etcd (kube-apiserver, kube-controller-manager,
 * kube-scheduler, in that order) and stopped before it around every reboot; under the lab firmware
 * as processes (`run/<name>.pid`, `run/<name>.log`), on a real machine as systemd units
 * (`/run/systemd/system/molt-<name>.service`). Until the cluster applies a version, each runs from
 * `binaries`; after, from the bundle staged under `state/kubernetes/`.
 */
export const ControlPlaneConfig = z
  .object({
    /** Directory of the binaries the components run before any apply (`<dir>/kube-apiserver`, …). */
    binaries: z.string().min(1),
    /** The Kubernetes version of `binaries`, as status reports it. */
    version: KubeVersion.optional(),
    components: z
      .object({
        'kube-apiserver': ComponentConfig.optional(),
        'kube-controller-manager': ComponentConfig.optional(),
        'kube-scheduler': ComponentConfig.optional(),
      })
      .strict()
      .refine((c) => Object.keys(c).length > 0, 'name at least one component'),
    /**
     * How long an applied component may take to become healthy; past it the previous spec is
     * restored and the apply fails with MOLT_KUBE_COMPONENT_UNHEALTHY. @default 90
     */
    healthTimeoutSeconds: z.number().int().positive().default(90),
    /** Largest Kubernetes bundle accepted (the sum of its binaries), in bytes. @default 1 GiB */
    maxBundleBytes: z
      .number()
      .int()
      .positive()
      .default(1024 ** 3),
    /**
     * The cluster's PKI (`molt pki kubernetes`) on STATE: `molt install --kube-pki DIR` checks that
     * DIR is whole and `cluster`'s, then copies it to `dir`, laid out as kubeadm's /etc/kubernetes
     * (the components' flags name files under it). A machine without it finds its PKI where the
     * components' flags say.
     */
    pki: z
      .object({
        /** The cluster its CAs name (`molt pki kubernetes --cluster`). */
        cluster: z.string().min(1),
        /** @default /molt/state/kubernetes */
        dir: z
          .string()
          .regex(
            /^\/molt\/state\/[^\0]+$/,
            'a directory under /molt/state/ (the root is read-only)',
          )
          .refine((d) => !d.split('/').includes('..'), 'no .. in the path')
          .default('/molt/state/kubernetes'),
      })
      .strict()
      .optional(),
    /**
     * Make the cluster ready for its nodes once this machine's API server answers (docs/adr/0018
     * §3), as `<pki.dir>/admin.conf`: the TLS-bootstrap RBAC (deploy/kubernetes/node-bootstrap.yaml)
     * applied server-side, and the token in `tokenFile` registered as a bootstrap token unless it
     * already is. Done once (`state/kubernetes/bootstrapped` records it); one that fails half-way
     * is tried again until it succeeds, and at the next start.
     */
    bootstrap: z
      .object({
        /**
         * File holding the token workers join with, `<id>.<secret>` (their `bootstrapTokenFile`).
         * @default `<pki.dir>/bootstrap-token`, the one `molt pki kubernetes` makes
         */
        tokenFile: z.string().min(1).optional(),
        /** How long the token authenticates from its registration. @default 24 */
        ttlHours: z.number().int().positive().max(8760).default(24),
      })
      .strict()
      .optional(),
  })
  .strict()
  .refine((c) => c.bootstrap === undefined || c.pki !== undefined, {
    message: 'bootstrapping the cluster needs its PKI (controlPlane.pki): it acts as admin.conf',
    path: ['bootstrap'],
  });
export type ControlPlaneConfig = z.infer<typeof ControlPlaneConfig>;
