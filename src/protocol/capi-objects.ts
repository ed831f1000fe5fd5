// SPDX-License-Identifier: Apache-2.0
/**
 * The Cluster API objects (v1beta2) molt reads in hook requests, and the `ExtensionConfig` molt
 * registers. CAPI trims what it sends to apiVersion/kind, name, namespace, labels, annotations and
 * spec; every object keeps fields molt does not know (a newer CAPI's, a provider's), because CAPI
 * compares specs whole and so must molt. Only what molt reads is typed.
 */
import { z } from 'zod';

/** The API version of the Machines and MachineSets CAPI v1.14 sends. */
export const ClusterApiVersion = 'cluster.x-k8s.io/v1beta2';
/** The API version of `ExtensionConfig` in CAPI v1.14. */
export const RuntimeApiVersion = 'runtime.cluster.x-k8s.io/v1beta2';

const name = z.string().min(1).max(253);
const labels = z.record(z.string().max(317), z.string().max(63)).optional();
const annotations = z.record(z.string().max(317), z.string().max(256 * 1024)).optional();

/** ObjectMeta as CAPI sends it in hook requests (trimmed), other fields kept. */
export const objectMeta = z.looseObject({
  name,
  namespace: z.string().min(1).max(63).optional(),
  labels,
  annotations,
});

/** Any object CAPI embeds (a provider's InfraMachine, KubeadmConfig, templates): kept whole. */
export const capiObject = z.looseObject({
  apiVersion: z.string().min(1).max(253),
  kind: z.string().min(1).max(63),
  metadata: objectMeta,
  spec: z.record(z.string(), z.unknown()).optional(),
});
export type CapiObject = z.output<typeof capiObject>;

/** A Machine's spec: what molt reads is typed (the Kubernetes version), the rest kept whole. */
export const machineSpec = z.looseObject({
  clusterName: name,
  version: z.string().min(1).max(128).optional(),
  providerID: z.string().max(512).optional(),
});
export type MachineSpec = z.output<typeof machineSpec>;

export const machine = z.looseObject({
  apiVersion: z.literal(ClusterApiVersion),
  kind: z.literal('Machine'),
  metadata: objectMeta,
  spec: machineSpec,
});
export type Machine = z.output<typeof machine>;

export const machineSet = z.looseObject({
  apiVersion: z.literal(ClusterApiVersion),
  kind: z.literal('MachineSet'),
  metadata: objectMeta,
  spec: z.looseObject({
    clusterName: name,
    template: z.looseObject({ spec: machineSpec }),
  }),
});
export type MachineSet = z.output<typeof machineSet>;

/**
 * The `ExtensionConfig` (cluster-scoped) that registers an extension: CAPI calls `clientConfig.url`
 * (https only; for `https://127.0.0.1:PORT` the serving certificate needs IP SAN 127.0.0.1) and
 * trusts `caBundle` (base64 PEM). `status` is CAPI's (discovered handlers, conditions), kept whole.
 */
export const ExtensionConfig = z.looseObject({
  apiVersion: z.literal(RuntimeApiVersion),
  kind: z.literal('ExtensionConfig'),
  metadata: objectMeta,
  spec: z.strictObject({
    clientConfig: z.strictObject({
      url: z
        .url({ protocol: /^https$/ })
        .max(2048)
        .optional(),
      service: z
        .strictObject({
          namespace: z.string().min(1).max(63),
          name: z.string().min(1).max(63),
          path: z.string().max(1024).optional(),
          port: z.int().min(1).max(65535).optional(),
        })
        .optional(),
      caBundle: z
        .base64()
        .max(64 * 1024)
        .optional(),
    }),
    namespaceSelector: z
      .strictObject({
        matchLabels: z.record(z.string().max(317), z.string().max(63)).optional(),
        matchExpressions: z
          .array(z.looseObject({ key: z.string().max(317) }))
          .max(32)
          .optional(),
      })
      .optional(),
    settings: z.record(z.string().max(253), z.string().max(4096)).optional(),
  }),
  status: z.looseObject({}).optional(),
});
export type ExtensionConfig = z.output<typeof ExtensionConfig>;

/** Options of {@link moltExtensionConfig}. */
export interface MoltExtensionConfigOptions {
  /** The object's name; CAPI names molt's handlers `<handler>.<name>`. */
  readonly name: string;
  /** molt's extension listener, `https://host:port` (CAPI appends the hook paths). */
  readonly url: string;
  /** Base64 of the PEM CA that signed the listener's certificate. */
  readonly caBundle: string;
}

/** The ExtensionConfig molt registers: its URL and CA, all namespaces, no settings. */
export function moltExtensionConfig(o: MoltExtensionConfigOptions): ExtensionConfig {
  return ExtensionConfig.parse({
    apiVersion: RuntimeApiVersion,
    kind: 'ExtensionConfig',
    metadata: { name: o.name },
    spec: { clientConfig: { url: o.url, caBundle: o.caBundle }, namespaceSelector: {} },
  });
}
