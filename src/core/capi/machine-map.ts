// SPDX-License-Identifier: Apache-2.0
/**
 * Which molt machine a Cluster API Machine is (docs/adr/0014 decision 2), decided only from what
 * molt read of the Machine on the management cluster itself — never from a hook request, whose
 * labels, annotations, namespace and cluster a caller chooses. A Machine is molt machine `id` when
 * its own object maps to `id` (annotation `molt.dev/machine` or providerID `molt://<id>`, read by
 * the adapter) AND its Cluster (`<namespace>/<spec.clusterName>`) is mapped by `capi.clusters` to
 * that machine's pool: a Machine anyone creates in another namespace or for another Cluster,
 * annotated with a production machine's id, maps to nothing.
 */

/** `capi.clusters`: each Cluster as `<namespace>/<name>` → the molt pools its Machines may be in. */
export type ClusterPools = Readonly<Record<string, readonly string[]>>;

/** The `capi.clusters` key of a Cluster. */
export const clusterKey = (namespace: string, name: string): string => `${namespace}/${name}`;

/** A Machine as molt read it from the management cluster. */
export interface MachineAsRead {
  readonly namespace: string;
  readonly name: string;
  /** Its `spec.clusterName`. */
  readonly clusterName: string;
  /** The molt machine its own annotation or providerID names, if any. */
  readonly moltMachine?: string | undefined;
}

/** A molt machine, as far as the mapping reads it. */
export interface PooledMachine {
  readonly id: string;
  readonly pool: string;
}

export type MachineMapping =
  { readonly machine: string; readonly pool: string } | { readonly refused: string };

/** The pools a Cluster's Machines may be in (none when the Cluster is not mapped). */
export function poolsOfCluster(
  clusters: ClusterPools,
  namespace: string,
  clusterName: string,
): readonly string[] {
  const key = clusterKey(namespace, clusterName);
  return Object.hasOwn(clusters, key) ? (clusters[key] ?? []) : [];
}

/** Whether the Machine's own Cluster is mapped to `pool`. */
export const inPoolCluster = (
  m: Pick<MachineAsRead, 'namespace' | 'clusterName'>,
  pool: string,
  clusters: ClusterPools,
): boolean => poolsOfCluster(clusters, m.namespace, m.clusterName).includes(pool);

/** The molt machine `read` is, or why it is none (`read` undefined: the Machine is not there). */
export function mapMachine(
  read: MachineAsRead | undefined,
  machines: readonly PooledMachine[],
  clusters: ClusterPools,
): MachineMapping {
  if (read === undefined) return { refused: 'the Machine is not on the management cluster' };
  const at = `Machine ${read.namespace}/${read.name}`;
  if (read.moltMachine === undefined)
    return {
      refused: `${at} names no molt machine (annotation molt.dev/machine or providerID molt://<id>)`,
    };
  const machine = machines.find((m) => m.id === read.moltMachine);
  if (machine === undefined)
    return { refused: `${at} names molt machine ${read.moltMachine}, which is not in the fleet` };
  if (!inPoolCluster(read, machine.pool, clusters))
    return {
      refused: `${at} is in Cluster ${clusterKey(read.namespace, read.clusterName)}, which capi.clusters does not map to pool ${machine.pool} of ${machine.id}`,
    };
  return { machine: machine.id, pool: machine.pool };
}
