// SPDX-License-Identifier: Apache-2.0
/**
 * A typed protocol client per machine, each on that machine's checked connection pool
 * (`dispatchers.ts`): what the gateway and the adapters whose calls outlast its 5 s (image pins,
 * control-plane applies) have in common.
 */
import { ErrorCode, errorMessage, isMoltError, MoltError } from '../../../core/errors.ts';
import { fetch, type Dispatcher } from 'undici';
import type { MtlsFetchOptions } from '../../../platform/https/mtls-fetch.ts';
import { identityRefusal } from '../../../platform/https/peer-node.ts';
import type { AgentFetch } from '../../../protocol/index.ts';
import type { MachineRecord } from '../../ports/store.ts';
import { machineDispatchers, type MachineAddress } from './dispatchers.ts';

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

export interface MachineClients<C> {
  /** The client of `m`'s agent; made again when `m`'s endpoint changed. */
  readonly client: (m: MachineAddress) => C;
  /** Close every pool's connections. */
  readonly close: () => Promise<void>;
}

/**
 * Clients made by `create`, whose requests connect within the options' `timeoutMs` (5 s) and are
 * answered within `answerMs`, or are cut off.
 */
export function machineClients<C>(
  o: MtlsFetchOptions,
  answerMs: number,
  create: (t: { baseUrl: string; fetch: AgentFetch }) => C,
): MachineClients<C> {
  const pools = machineDispatchers(o, {
    connectMs: o.timeoutMs ?? 5_000,
    headersMs: answerMs,
    bodyMs: answerMs,
  });
  const clients = new Map<string, { endpoint: string; client: C }>();
  const client = (m: MachineAddress): C => {
    const known = clients.get(m.id);
    if (known?.endpoint === m.endpoint) return known.client;
    const c = create({
      baseUrl: m.endpoint,
      fetch: machineFetch(pools.forMachine(m), () => AbortSignal.timeout(answerMs)),
    });
    clients.set(m.id, { endpoint: m.endpoint, client: c });
    return c;
  };
  return { client, close: () => pools.close() };
}

/** Calls to machines' agents, each over its machine's checked connection pool. */
export interface MachineCalls<C> {
  /** `f` on the machine's agent client; transport failures become MOLT_AGENT_UNREACHABLE. */
  readonly call: <T>(m: MachineRecord, f: (c: C) => Promise<T>) => Promise<T>;
  readonly close: () => Promise<void>;
}

/**
 * {@link machineClients} whose calls turn a failure that is not the agent's own answer (a molt
 * error keeps its code) into a retryable MOLT_AGENT_UNREACHABLE naming the machine.
 */
export function machineCalls<C>(
  o: MtlsFetchOptions,
  answerMs: number,
  create: (t: { baseUrl: string; fetch: AgentFetch }) => C,
): MachineCalls<C> {
  const { client, close } = machineClients(o, answerMs, create);
  const call = async <T>(m: MachineRecord, f: (c: C) => Promise<T>): Promise<T> => {
    try {
      return await f(client(m));
    } catch (e) {
      if (isMoltError(e)) throw e;
      throw new MoltError(
        ErrorCode.AgentUnreachable,
        `the agent of ${m.id} at ${m.endpoint} is unreachable: ${errorMessage(e)}`,
        { cause: e, retryable: true },
      );
    }
  };
  return { call, close };
}
