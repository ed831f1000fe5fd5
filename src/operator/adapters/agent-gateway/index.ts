// SPDX-License-Identifier: Apache-2.0
/**
 * {@link AgentGateway} over HTTPS with mutual TLS (docs/adr/0004 §6): the operator presents its
 * `operator` certificate and trusts only the fleet CA. One undici `Agent` (connection pool) serves
 * every machine; a protocol `AgentClient` is kept per endpoint. Transport failures become
 * `MOLT_AGENT_UNREACHABLE` (retryable: the machine may be rebooting); the agent's own error
 * answers (busy, forbidden, bad input) keep their codes.
 *
 * The CLI has its own connection code (`cli/mtls/connect.ts`) because it diagnoses
 * certificate problems for a person; the operator only needs reachable or not.
 */
import { ErrorCode, isMoltError, MoltError } from '../../../core/errors.ts';
import { createMtlsFetch, type MtlsFetchOptions } from '../../../platform/https/mtls-fetch.ts';
import { createAgentClient, type AgentClient } from '../../../protocol/index.ts';
import type { AgentGateway } from '../../ports/agents.ts';
import type { MachineRecord } from '../../ports/store.ts';

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

export function createAgentGateway(o: AgentGatewayOptions): AgentGateway {
  const mtls = createMtlsFetch(o);
  const clients = new Map<string, AgentClient>();
  const client = (m: MachineRecord): AgentClient => {
    let c = clients.get(m.endpoint);
    if (c === undefined) {
      c = createAgentClient({ baseUrl: m.endpoint, fetch: mtls.fetch });
      clients.set(m.endpoint, c);
    }
    return c;
  };
  const call = async <T>(m: MachineRecord, f: (c: AgentClient) => Promise<T>): Promise<T> => {
    try {
      return await f(client(m));
    } catch (e) {
      if (isMoltError(e) && e.code !== ErrorCode.AgentUnreachable) throw e;
      throw unreachable(m, e);
    }
  };
  return {
    status: (m) => call(m, (c) => c.status()),
    upgrade: (m, request) =>
      call(m, (c) =>
        c.upgrade({
          image: request.image,
          preserve: request.preserve ?? true,
          ...(request.drain !== undefined && { drain: request.drain }),
        }),
      ),
    rollback: (m) => call(m, (c) => c.rollback()),
    close: () => mtls.close(),
  };
}
