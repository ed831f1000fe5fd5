// SPDX-License-Identifier: Apache-2.0
/**
 * Machines from the cluster's Nodes (docs/adr/0011): a Node labelled
 * `node-restriction.kubernetes.io/molt-pool=<pool>` is a machine of that pool, named as the Node.
 * Its agent is where the Node's `molt.dev/agent-endpoint` annotation says (the agent writes it,
 * `kubernetes.advertise`), else at the Node's InternalIP on the configured agent port. The
 * control-plane role comes from `node-role.kubernetes.io/control-plane`; the Node's labels (zone:
 * `topology.kubernetes.io/zone`) are the machine's, so a pool's `zones` policy can name them.
 *
 * Pool and role come only from labels a node cannot set on itself (docs/adr/0006 §13):
 * NodeRestriction refuses both prefixes to kubelets and molt's admission policy refuses them to
 * agents, so a machine cannot join a pool, or become control plane, by its own word — that stays
 * with whoever may label Nodes, as `selfRegistration` keeps it with the operator's config. A Node
 * carrying only the old `molt.dev/pool`, which its kubelet may write, is no machine.
 */
import type { V1Node } from '@kubernetes/client-node';
import {
  AgentEndpointAnnotation,
  PoolLabel,
  UntrustedPoolLabel,
} from '../../../protocol/kube-resources.ts';
import type { MachineRecord } from '../../ports/store.ts';

export interface NodeInventoryOptions {
  /** The cluster the machines belong to (small-control-plane rules, quorum). */
  readonly cluster?: string | undefined;
  /** The agents' port at each Node's InternalIP, when Nodes carry no endpoint annotation. */
  readonly agentPort?: number | undefined;
}

export type NodeMachine =
  { readonly machine: MachineRecord } | { readonly node: string; readonly skipped: string };

const ControlPlaneLabel = 'node-role.kubernetes.io/control-plane';

export function nodeMachine(n: V1Node, o: NodeInventoryOptions): NodeMachine {
  const name = n.metadata?.name ?? '';
  const labels = n.metadata?.labels ?? {};
  const pool = labels[PoolLabel];
  if (pool === undefined)
    return {
      node: name,
      skipped: `labelled ${UntrustedPoolLabel}, which its own kubelet may write: a pool is taken only from ${PoolLabel} (kubectl label node ${name} ${PoolLabel}=<pool>)`,
    };
  const endpoint = endpointOf(n, o.agentPort);
  if (endpoint === undefined)
    return {
      node: name,
      skipped: `no ${AgentEndpointAnnotation} annotation${o.agentPort === undefined ? '' : ' and no InternalIP'} (set kubernetes.advertise in its agent's config${o.agentPort === undefined ? ', or kubernetes.nodes.agentPort in the operator' : ''})`,
    };
  return {
    machine: {
      id: name,
      endpoint,
      role: ControlPlaneLabel in labels ? 'control-plane' : 'worker',
      pool,
      labels,
      ...(o.cluster !== undefined && { cluster: o.cluster }),
      fromNode: true,
    },
  };
}

function endpointOf(n: V1Node, agentPort: number | undefined): string | undefined {
  const advertised = n.metadata?.annotations?.[AgentEndpointAnnotation];
  if (advertised !== undefined && /^https:\/\/[^\s/]+$/.test(advertised)) return advertised;
  if (agentPort === undefined) return undefined;
  const ip = n.status?.addresses?.find((a) => a.type === 'InternalIP')?.address;
  if (ip === undefined) return undefined;
  return `https://${ip.includes(':') ? `[${ip}]` : ip}:${String(agentPort)}`;
}
