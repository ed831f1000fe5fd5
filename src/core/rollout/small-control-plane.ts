// SPDX-License-Identifier: Apache-2.0
/**
 * Small control planes: a cluster with one or two control-plane machines runs a one- or
 * two-member etcd, which has no quorum while one member is down. Its control-plane machines wait
 * (`SmallControlPlane`) unless the cluster's policy accepts the downtime; then each start carries
 * the downtime as its reason, so `molt plan` says what the start costs. The size is the fleet's
 * count of control-plane machines in the cluster — what the planner's quorum check counts too; the
 * agent checks the real etcd member list again before it takes its member down.
 */
import { clusterOf } from './context.ts';
import { WaitReason, type ClusterPolicy, type Machine, type Refusal } from './types.ts';

/** What the rule reads of a machine. */
type Placed = Pick<Machine, 'id' | 'role' | 'cluster'>;

/** What it reads of the fleet (a {@link FleetSnapshot} is one). */
export interface Placement {
  readonly machines: readonly Placed[];
  readonly clusters?: readonly ClusterPolicy[];
}

/** Control-plane machines per cluster, counted once per snapshot. */
const sizes = new WeakMap<Placement, ReadonlyMap<string, number>>();

function sizesOf(s: Placement): ReadonlyMap<string, number> {
  let counted = sizes.get(s);
  if (counted === undefined) {
    const n = new Map<string, number>();
    for (const m of s.machines)
      if (m.role === 'control-plane') n.set(clusterOf(m), (n.get(clusterOf(m)) ?? 0) + 1);
    counted = n;
    sizes.set(s, counted);
  }
  return counted;
}

const accepts = (s: Placement, cluster: string): boolean =>
  s.clusters?.some((c) => c.name === cluster && c.smallControlPlane === 'accept-downtime') === true;

const members = (n: number): string => (n === 1 ? 'one etcd member' : `${String(n)} etcd members`);

/** Small: the control plane of `m`'s cluster has fewer than three machines. */
function smallSize(s: Placement, m: Placed): number | undefined {
  if (m.role !== 'control-plane') return undefined;
  const n = sizesOf(s).get(clusterOf(m)) ?? 0;
  return n > 0 && n < 3 ? n : undefined;
}

/** Why a control-plane machine of a small cluster waits; undefined when it may start. */
export function smallControlPlaneRefusal(s: Placement, m: Placed): Refusal | undefined {
  const n = smallSize(s, m);
  const cluster = clusterOf(m);
  if (n === undefined || accepts(s, cluster)) return undefined;
  return {
    code: WaitReason.SmallControlPlane,
    message: `cluster ${cluster} has ${members(n)}: etcd has no quorum while ${m.id} is down; set smallControlPlane: accept-downtime on cluster ${cluster} to upgrade it anyway`,
  };
}

/** What a start of `m` costs when its cluster accepted a small control plane's downtime. */
export function etcdDowntime(
  s: Placement,
  m: Placed,
): { readonly code: 'EtcdDowntime'; readonly message: string } | undefined {
  const n = smallSize(s, m);
  const cluster = clusterOf(m);
  if (n === undefined || !accepts(s, cluster)) return undefined;
  return {
    code: 'EtcdDowntime',
    message: `cluster ${cluster} has ${members(n)}: etcd and the Kubernetes API are unavailable while ${m.id} reboots (smallControlPlane: accept-downtime)`,
  };
}

/** Whether the operator tells `m`'s agent that losing etcd quorum is accepted. */
export const acceptsQuorumLoss = (s: Placement, m: Placed): boolean =>
  etcdDowntime(s, m) !== undefined;
