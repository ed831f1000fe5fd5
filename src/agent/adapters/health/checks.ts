// SPDX-License-Identifier: Apache-2.0
/**
 * Health checks that gate the commit of a new slot (docs/adr/0004 §3). Each names what it proves;
 * a check that cannot apply (no cluster) reports `skipped`, which does not block the commit.
 */
import type { EtcdMember } from '../../ports/etcd-member.ts';
import type { HealthCheck } from '../../ports/health-check.ts';
import type { KubeNode } from '../../ports/kube-node.ts';

/** The Kubernetes node is Ready again (skipped outside a cluster). */
export function kubeNodeReady(kube: KubeNode): HealthCheck {
  return {
    name: 'kube-node-ready',
    async run() {
      const outcome = await kube.ready();
      return outcome.status === 'done'
        ? { name: 'kube-node-ready', status: 'ok', message: 'node Ready' }
        : { name: 'kube-node-ready', status: 'skipped', message: outcome.reason };
    },
  };
}

/** The agent's own API is serving: a slot whose agent cannot be reached must not become permanent. */
export function agentApiServing(listening: () => string | undefined): HealthCheck {
  return {
    name: 'agent-api',
    run() {
      const url = listening();
      return Promise.resolve(
        url === undefined
          ? { name: 'agent-api', status: 'failing', message: 'the API is not listening yet' }
          : { name: 'agent-api', status: 'ok', message: `serving on ${url}` },
      );
    },
  };
}

/** This machine's etcd member is healthy and caught up (control planes). */
export function etcdMemberHealthy(member: EtcdMember): HealthCheck {
  return {
    name: 'etcd-member',
    async run() {
      const h = await member.healthy();
      return {
        name: 'etcd-member',
        status: h.healthy ? 'ok' : 'failing',
        message: h.message ?? (h.healthy ? 'healthy' : 'unhealthy'),
      };
    },
  };
}
