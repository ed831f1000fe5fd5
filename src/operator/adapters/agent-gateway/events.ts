// SPDX-License-Identifier: Apache-2.0
/**
 * {@link AgentEventSource} over mTLS: `GET /v1/logs?follow=true&tail=0` on each agent, with the
 * same per-connection check of the agent's certificate as the gateway (`dispatchers.ts`). Its own
 * connection pools, apart from the gateway's, because a stream is open for as long as the agent
 * runs: the body timeout is three of the agent's 15 s keep-alive comments, so a machine that
 * vanishes without closing its connections (power cut) is noticed within 45 s.
 */
import { createAgentClient } from '../../../protocol/index.ts';
import type { AgentEventSource } from '../../ports/agent-events.ts';
import { machineDispatchers } from './dispatchers.ts';
import type { AgentGatewayOptions } from './index.ts';
import { machineFetch } from './machine-clients.ts';

const silenceMs = 45_000;

export function createAgentEventSource(
  o: AgentGatewayOptions,
): AgentEventSource & { close(): Promise<void> } {
  const connectMs = o.timeoutMs ?? 5_000;
  const pools = machineDispatchers(o, { connectMs, headersMs: connectMs, bodyMs: silenceMs });
  return {
    follow: (machine, signal, opened) => {
      const fetch = machineFetch(pools.forMachine(machine), () => signal);
      return createAgentClient({
        baseUrl: machine.endpoint,
        fetch: async (target, init) => {
          const res = await fetch(target, init);
          if (res.status === 200) opened?.();
          return res;
        },
      }).logs({ follow: true, tail: 0 });
    },
    close: () => pools.close(),
  };
}
