// SPDX-License-Identifier: Apache-2.0
/**
 * {@link AgentGateway} over HTTPS with mutual TLS (docs/adr/0004 §6): the operator presents its
 * `operator` certificate, trusts only the fleet CA, and on every connection checks that the agent
 * presents the certificate of the machine it means (`CN=<machine id>, O=molt:node`; one connection
 * pool per machine, `dispatchers.ts`). Transport failures become `MOLT_AGENT_UNREACHABLE`
 * (retryable: the machine may be rebooting); an agent presenting another machine's certificate is
 * `MOLT_AGENT_IDENTITY` (not retryable, nothing is sent to it); the agent's own error answers
 * (busy, forbidden, bad input) keep their codes.
 *
 * The CLI has its own connection code (`cli/mtls/connect.ts`) because it diagnoses
 * certificate problems for a person; the operator only needs reachable or not, and who.
 */
import { ErrorCode, isMoltError, MoltError } from '../../../core/errors.ts';
import { iso } from '../../../core/time.ts';
import type { MtlsFetchOptions } from '../../../platform/https/mtls-fetch.ts';
import { createAgentClient, type AgentClient } from '../../../protocol/index.ts';
import type { AgentGateway } from '../../ports/agents.ts';
import type { MachineRecord } from '../../ports/store.ts';
import { machineClients, type MachineCalls } from './machine-clients.ts';
import { RequestDefaults } from '../../../core/upgrade/events.ts';

/** PEM: the fleet CA, the operator's certificate and key; a deadline per request. */
export type AgentGatewayOptions = MtlsFetchOptions;

function unreachable(machine: MachineRecord, e: unknown): MoltError {
  const inner =
    e instanceof Error ? (e.cause instanceof Error ? e.cause.message : e.message) : String(e);
  return new MoltError(
    ErrorCode.AgentUnreachable,
    `the agent of ${machine.id} at ${machine.endpoint} is unreachable: ${inner}`,
    {
      cause: e,
      retryable: true,
    },
  );
}

/** Calls to machines' agents, each over its machine's checked connection pool. */
export type AgentCalls = MachineCalls<AgentClient>;

/** The clients and connection pools {@link createAgentGateway} (and the dashboard's journal) use. */
export function agentCalls(o: AgentGatewayOptions): AgentCalls {
  const { client, close } = machineClients(o, o.timeoutMs ?? 5_000, createAgentClient);
  const call = async <T>(m: MachineRecord, f: (c: AgentClient) => Promise<T>): Promise<T> => {
    try {
      return await f(client(m));
    } catch (e) {
      if (isMoltError(e) && e.code !== ErrorCode.AgentUnreachable) throw e;
      throw unreachable(m, e);
    }
  };
  return { call, close };
}

export function createAgentGateway(o: AgentGatewayOptions): AgentGateway {
  const { call, close } = agentCalls(o);
  return {
    status: (m) => call(m, (c) => c.status()),
    upgrade: (m, request) =>
      call(m, (c) =>
        c.upgrade({
          image: request.image,
          preserve: request.preserve ?? RequestDefaults.preserve,
          ...(request.drain !== undefined && { drain: request.drain }),
          ...(request.acceptQuorumLoss === true && { acceptQuorumLoss: true }),
          ...(request.stage === true && { stage: true }),
        }),
      ),
    apply: (m, request) =>
      call(m, (c) =>
        c.reboot({
          apply: request.operationId,
          ...(request.acceptQuorumLoss === true && { acceptQuorumLoss: true }),
        }),
      ),
    discard: (m, operationId) => call(m, (c) => c.cancel({ operation: operationId })),
    rollback: (m) => call(m, (c) => c.rollback()),
    setHold: (m, hold) =>
      call(m, (c) =>
        c.setHold({ reason: hold.reason, until: iso(hold.until), onBehalfOf: hold.onBehalfOf }),
      ),
    clearHold: (m) => call(m, (c) => c.clearHold()),
    close,
  };
}
