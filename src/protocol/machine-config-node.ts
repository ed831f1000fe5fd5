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
import { Ipv4Address, Ipv4Cidr } from './ipv4.ts';

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
    /**
     * The Node's InternalIP (the kubelet's `--node-ip`), where the API server reaches the kubelet
     * (logs, exec) and other nodes its pods. @default the address of the NIC the default route
     * leaves by
     */
    address: Ipv4Address.optional(),
    /** Most pods the kubelet runs. @default 110 (the kubelet's) */
    maxPods: z.number().int().min(1).max(1000).optional(),
  })
  .strict();
export type KubernetesNodeConfig = z.infer<typeof KubernetesNodeConfig>;

/** `<id>.<secret>`: 6 and 16 characters of [a-z0-9] (the bootstrap token format). */
export const BootstrapTokenPattern = /^[a-z0-9]{6}\.[a-z0-9]{16}$/;
