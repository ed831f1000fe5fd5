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
import { fetch, type Dispatcher } from 'undici';
import type { MtlsFetchOptions } from '../../../platform/https/mtls-fetch.ts';
import { identityRefusal } from '../../../platform/https/peer-node.ts';
import { createAgentClient, type AgentClient, type AgentFetch } from '../../../protocol/index.ts';
import type { AgentGateway } from '../../ports/agents.ts';
import type { MachineRecord } from '../../ports/store.ts';
import { machineDispatchers, type MachineAddress } from './dispatchers.ts';

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

/**
 * undici's `fetch` over `dispatcher`; a refused peer identity comes out as the `MoltError` the TLS
 * check made (undici wraps it in "fetch failed"), so no caller can mistake it for a lost connection.
 */
export function machineFetch(
  dispatcher: Dispatcher,
  signal: () => AbortSignal | undefined,
): AgentFetch {
  return async (target, init) => {
    try {
      const s = signal();
      const res = await fetch(target, {
        ...init,
        dispatcher,
        ...(s !== undefined && { signal: s }),
      });
      return { status: res.status, text: () => res.text(), body: res.body };
    } catch (e) {
      throw identityRefusal(e) ?? e;
    }
  };
}

/** Calls to machines' agents, each over its machine's checked connection pool. */
export interface AgentCalls {
  /** `f` on the machine's agent client; transport failures become MOLT_AGENT_UNREACHABLE. */
  readonly call: <T>(m: MachineRecord, f: (c: AgentClient) => Promise<T>) => Promise<T>;
  readonly close: () => Promise<void>;
}

/** The clients and connection pools {@link createAgentGateway} (and the dashboard's journal) use. */
export function agentCalls(o: AgentGatewayOptions): AgentCalls {
  const timeout = o.timeoutMs ?? 5_000;
  const pools = machineDispatchers(o, {
    connectMs: timeout,
    headersMs: timeout,
    bodyMs: timeout,
  });
  const clients = new Map<string, { endpoint: string; client: AgentClient }>();
  const client = (m: MachineAddress): AgentClient => {
    const known = clients.get(m.id);
    if (known?.endpoint === m.endpoint) return known.client;
    const c = createAgentClient({
      baseUrl: m.endpoint,
      fetch: machineFetch(pools.forMachine(m), () => AbortSignal.timeout(timeout)),
    });
    clients.set(m.id, { endpoint: m.endpoint, client: c });
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
  return { call, close: () => pools.close() };
}

export function createAgentGateway(o: AgentGatewayOptions): AgentGateway {
  const { call, close } = agentCalls(o);
  return {
    status: (m) => call(m, (c) => c.status()),
    upgrade: (m, request) =>
      call(m, (c) =>
        c.upgrade({
          image: request.image,
          preserve: request.preserve ?? true,
          ...(request.drain !== undefined && { drain: request.drain }),
          ...(request.acceptQuorumLoss === true && { acceptQuorumLoss: true }),
        }),
      ),
    rollback: (m) => call(m, (c) => c.rollback()),
    setHold: (m, hold) =>
      call(m, (c) =>
        c.setHold({ reason: hold.reason, until: iso(hold.until), onBehalfOf: hold.onBehalfOf }),
      ),
    clearHold: (m) => call(m, (c) => c.clearHold()),
    close,
  };
}
