// SPDX-License-Identifier: Apache-2.0
/**
 * {@link KubeAgents} over protocol's typed client of the agents' control-plane routes
 * (`createKubernetesAgentClient`), on the operator's mutual-TLS connections — one pool per machine
 * that checks the agent presents that machine's certificate (`agent-gateway/dispatchers.ts`). A
 * component apply answers only once the component is healthy, so these connections wait up to
 * `applyTimeoutMs` for an answer (the gateway's 5 s would cut every apply short).
 */
import { ErrorCode, isMoltError, MoltError } from '../../../core/errors.ts';
import type { MtlsFetchOptions } from '../../../platform/https/mtls-fetch.ts';
import {
  createKubernetesAgentClient,
  type KubernetesAgentClient,
} from '../../../protocol/agent-kubernetes-client.ts';
import type { KubeAgents } from '../../ports/kube-agents.ts';
import type { MachineRecord } from '../../ports/store.ts';
import { machineDispatchers } from '../agent-gateway/dispatchers.ts';
import { machineFetch } from '../agent-gateway/index.ts';

export interface KubeAgentsOptions extends MtlsFetchOptions {
  /** How long an apply (or a pre-pull) may take. @default 600000 */
  readonly applyTimeoutMs?: number;
}

export function createKubeAgents(o: KubeAgentsOptions): KubeAgents {
  const longMs = o.applyTimeoutMs ?? 600_000;
  const pools = machineDispatchers(o, {
    connectMs: o.timeoutMs ?? 5_000,
    headersMs: longMs,
    bodyMs: longMs,
  });
  const clients = new Map<string, { endpoint: string; client: KubernetesAgentClient }>();
  const client = (m: MachineRecord): KubernetesAgentClient => {
    const known = clients.get(m.id);
    if (known?.endpoint === m.endpoint) return known.client;
    const c = createKubernetesAgentClient({
      baseUrl: m.endpoint,
      fetch: machineFetch(pools.forMachine(m), () => AbortSignal.timeout(longMs)),
    });
    clients.set(m.id, { endpoint: m.endpoint, client: c });
    return c;
  };
  const call = async <T>(
    m: MachineRecord,
    f: (c: KubernetesAgentClient) => Promise<T>,
  ): Promise<T> => {
    try {
      return await f(client(m));
    } catch (e) {
      if (isMoltError(e)) throw e;
      throw new MoltError(
        ErrorCode.AgentUnreachable,
        `the agent of ${m.id} at ${m.endpoint} is unreachable: ${e instanceof Error ? e.message : String(e)}`,
        { cause: e, retryable: true },
      );
    }
  };
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
    close: () => pools.close(),
  };
}
