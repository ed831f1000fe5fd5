// SPDX-License-Identifier: Apache-2.0
/**
 * The operator config's `store:` (docs/adr/0005 §4, 0016): where the operator keeps its state.
 *
 * ```yaml
 * store: memory                                   # this process only (tests, demos)
 * store: {etcd: ["http://127.0.0.1:2379"]}        # an etcd cluster of its own
 * store: kubernetes                               # OperatorRecords through the API server
 * store:
 *   kubernetes:
 *     kubeconfig: operator.kubeconfig             # default: the `kubernetes:` section's, else
 *                                                 # the pod's service account (in-cluster)
 *     namespace: molt-system                      # default: the `kubernetes:` section's, else
 *                                                 # the pod's namespace, else molt-system
 * ```
 */
import { z } from 'zod';

const namespace = z
  .string()
  .regex(/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/, 'a namespace name (DNS-1123 label)');

const EtcdStore = z.strictObject({
  etcd: z.array(z.url()).min(1, 'name at least one etcd endpoint'),
});

const KubernetesStore = z.strictObject({
  kubernetes: z.strictObject({
    kubeconfig: z.string().min(1).optional(),
    namespace: namespace.optional(),
  }),
});

const forms =
  'memory, kubernetes, {etcd: [http://host:2379, ...]} or {kubernetes: {kubeconfig?, namespace?}}';

/**
 * One of the four forms; `kubernetes` alone is `{kubernetes: {}}`. A value of none of them is
 * refused with the forms listed; a value of one form that is wrong inside says where.
 */
export const StoreConfig = z.union(
  [
    z.literal('memory'),
    z.literal('kubernetes').transform((): z.output<typeof KubernetesStore> => ({ kubernetes: {} })),
    EtcdStore,
    KubernetesStore,
  ],
  { error: `one of ${forms}` },
);
export type StoreConfig = z.output<typeof StoreConfig>;
