// SPDX-License-Identifier: Apache-2.0
/**
 * {@link AgentEventSource} over mTLS: `GET /v1/logs?follow=true&tail=0` on each agent. Its own
 * connection pool, apart from the gateway's, because a stream is open for as long as the agent
 * runs: the body timeout is three of the agent's 15 s keep-alive comments, so a machine that
 * vanishes without closing its connections (power cut) is noticed within 45 s.
 */
import { Agent, fetch } from 'undici';
import { createAgentClient } from '../../../protocol/index.ts';
import type { AgentEventSource } from '../../ports/agent-events.ts';
import type { AgentGatewayOptions } from './index.ts';

const silenceMs = 45_000;

export function createAgentEventSource(
  o: AgentGatewayOptions,
): AgentEventSource & { close(): Promise<void> } {
  const connectMs = o.timeoutMs ?? 5_000;
  const dispatcher = new Agent({
    connect: { ca: o.ca, cert: o.cert, key: o.key, timeout: connectMs },
    headersTimeout: connectMs,
    bodyTimeout: silenceMs,
  });
  return {
    follow: (machine, signal) =>
      createAgentClient({
        baseUrl: machine.endpoint,
        fetch: async (target, init) => {
          const res = await fetch(target, { ...init, dispatcher, signal });
          return { status: res.status, text: () => res.text(), body: res.body };
        },
      }).logs({ follow: true, tail: 0 }),
    close: () => dispatcher.close(),
  };
}
