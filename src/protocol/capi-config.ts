// SPDX-License-Identifier: Apache-2.0
/**
 * molt as a Cluster API in-place update extension (docs/adr/0014): its own HTTPS listener
 * (the API's `pki.serverCert`) that only CAPI's managers may call — their client certificates
 * (`--runtime-extension-client-cert-file`) are verified against `clientCa`; without it the
 * listener refuses to start unless `insecureNoClientAuth: true` says anyone may call. A CA that
 * signs other clients too (a cluster's CA) needs `clientNames`: the certificates (CN or DNS
 * SAN) that may call. molt reads
 * every Machine a hook names from the management cluster (`kubeconfig`, relative to this file;
 * get, list, patch and delete on `machines`, patch on `machines/status` of cluster.x-k8s.io)
 * and trusts only that read: a Machine is a molt machine when its annotation
 * `molt.dev/machine` (or providerID `molt://<id>`) names it AND `clusters` maps its Cluster
 * (`<namespace>/<name>`) to that machine's pool (one pool or a list). molt writes each
 * Machine's condition `MoltInPlaceUpdate` and, when an update failed (rolled back), ends CAPI's
 * retry loop: `onFailure: remediate` (the default) annotates a control-plane Machine
 * `cluster.x-k8s.io/remediate-machine` or deletes a MachineSet's, so CAPI replaces it;
 * `report` only answers `Failure`.
 */
import { z } from 'zod';
import { listenAddress } from './config-parts.ts';

const poolName = z.string().min(1).max(253);

export const CapiConfig = z
  .strictObject({
    listen: listenAddress,
    clientCa: z.string().min(1).optional(),
    /** Only these client certificates (subject CN or DNS SAN) of `clientCa`'s may call. */
    clientNames: z.array(z.string().min(1).max(253)).min(1).max(64).optional(),
    insecureNoClientAuth: z.boolean().default(false),
    clusters: z
      .record(
        z
          .string()
          .max(317)
          .regex(
            /^[a-z0-9]([-a-z0-9]*[a-z0-9])?\/[a-z0-9]([-.a-z0-9]*[a-z0-9])?$/,
            'a Cluster as <namespace>/<name>',
          ),
        z
          .union([poolName, z.array(poolName).min(1).max(64)])
          .transform((p) => (typeof p === 'string' ? [p] : p)),
      )
      .default({}),
    kubeconfig: z
      .string({
        error: 'required: the management cluster, where molt reads each Machine a hook names',
      })
      .min(1),
    onFailure: z.enum(['remediate', 'report']).default('remediate'),
  })
  .refine((k) => !(k.insecureNoClientAuth && k.clientCa !== undefined), {
    path: ['insecureNoClientAuth'],
    message:
      "contradicts clientCa: name the CA CAPI's client certificates come from, or say insecure",
  })
  .refine((k) => k.clientNames === undefined || k.clientCa !== undefined, {
    path: ['clientNames'],
    message: 'needs clientCa: without a CA no client certificate is asked for',
  });

export type CapiConfig = z.output<typeof CapiConfig>;
