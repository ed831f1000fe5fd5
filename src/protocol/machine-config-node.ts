// SPDX-License-Identifier: Apache-2.0
/**
 * `kubernetes.node` of a machine config: the machine is a real Kubernetes node that joins its
 * cluster by TLS bootstrap (docs/kubernetes.md). The kubelet authenticates once with a bootstrap
 * token, asks for a client certificate with a CertificateSigningRequest that the cluster's
 * controller manager approves and signs, and renews it itself from then on; the files it runs on
 * are rendered from this section (agent/kubernetes-node/files.ts). `caFile` and
 * `bootstrapTokenFile` are read where the files are rendered (`molt install`: the installer's
 * host); the machine keeps copies of both on STATE.
 */
import { z } from 'zod';
import { parseImageReference } from '../core/slots/reference.ts';

/** `a.b.c.d/n`, an IPv4 network whose host bits are zero (the bridge's subnet). */
export const Ipv4Cidr = z.string().refine(
  (s) => {
    const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})\/(\d{1,2})$/.exec(s);
    if (m === null) return false;
    const octets = m.slice(1, 5).map(Number);
    const prefix = Number(m[5]);
    if (octets.some((o) => o > 255) || prefix < 8 || prefix > 30) return false;
    const address = octets.reduce((a, o) => a * 256 + o, 0);
    return address % 2 ** (32 - prefix) === 0;
  },
  {
    message:
      'must be an IPv4 network a.b.c.d/n with n from 8 to 30 and no host bits set, like 10.244.1.0/24',
  },
);

/** An image reference with its registry host, as the sandbox (pause) image must be named. */
const ImageRef = z.string().superRefine((s, ctx) => {
  try {
    parseImageReference(s);
  } catch (error) {
    ctx.addIssue({
      code: 'custom',
      message: `${(error as Error).message} (a full reference, like 127.0.0.1:5000/molt/pause:3.10)`,
    });
  }
});

export const KubernetesNodeConfig = z
  .object({
    /** The API server the kubelet joins: `https://host:port`. */
    server: z.url({
      protocol: /^https$/,
      message: 'must be the https:// URL of the Kubernetes API server',
    }),
    /** PEM of the cluster CA: it verifies the API server and client certificates it signs. */
    caFile: z.string().min(1, 'must name the cluster CA file (PEM)'),
    /**
     * File holding one bootstrap token, `<id>.<secret>` (`abcdef.0123456789abcdef`, as
     * `kubeadm token create` prints it). Used for the first certificate only.
     */
    bootstrapTokenFile: z.string().min(1, 'must name the file holding the bootstrap token'),
    /** This node's pod subnet on its bridge (`cni0`), unique in the cluster: `10.244.1.0/24`. */
    podCidr: Ipv4Cidr,
    /**
     * The pod sandbox ("pause") image, pulled through `registry.mirrors` like any other: a
     * machine without access to registry.k8s.io names a copy in its own registry.
     */
    sandboxImage: ImageRef,
    /** Most pods the kubelet runs. @default 110 (the kubelet's) */
    maxPods: z.number().int().min(1).max(1000).optional(),
  })
  .strict();
export type KubernetesNodeConfig = z.infer<typeof KubernetesNodeConfig>;

/** `<id>.<secret>`: 6 and 16 characters of [a-z0-9] (the bootstrap token format). */
export const BootstrapTokenPattern = /^[a-z0-9]{6}\.[a-z0-9]{16}$/;
