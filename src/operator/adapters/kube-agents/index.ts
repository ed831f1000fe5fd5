// SPDX-License-Identifier: Apache-2.0
/**
 * {@link KubeAgents} over protocol's typed client of the agents' control-plane routes
 * (`createKubernetesAgentClient`), on the operator's mutual-TLS connections — one pool per machine
 * that checks the agent presents that machine's certificate (`agent-gateway/dispatchers.ts`). A
 * component apply answers only once the component is healthy, so these connections wait up to
 * `applyTimeoutMs` for an answer (the gateway's 5 s would cut every apply short).
 */
import type { MtlsFetchOptions } from '../../../platform/https/mtls-fetch.ts';
import { createKubernetesAgentClient } from '../../../protocol/agent-kubernetes-client.ts';
import type { KubeAgents } from '../../ports/kube-agents.ts';
import { machineCalls } from '../agent-gateway/machine-clients.ts';

export interface KubeAgentsOptions extends MtlsFetchOptions {
  /** How long an apply (or a pre-pull) may take. @default 600000 */
  readonly applyTimeoutMs?: number;
}

export function createKubeAgents(o: KubeAgentsOptions): KubeAgents {
  const { call, close } = machineCalls(o, o.applyTimeoutMs ?? 600_000, createKubernetesAgentClient);
  return {
    controlPlane: (m) => call(m, (c) => c.controlPlane()),
    prepull: (m, bundle) => call(m, (c) => c.prepull({ bundle })),
    apply: (m, component, spec) =>
      call(m, (c) =>
        c.applyComponent(component, {
          version: spec.version,
          bundle: spec.bundle,
          extraArgs: { ...spec.extraArgs },
          ...(spec.emulatedVersion !== undefined && { emulatedVersion: spec.emulatedVersion }),
        }),
      ),
    etcdMembers: (m) => call(m, (c) => c.etcdMembers()),
    forfeitLeadership: (m) => call(m, (c) => c.forfeitLeadership({})),
    close,
  };
}
