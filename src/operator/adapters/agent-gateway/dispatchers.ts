// SPDX-License-Identifier: Apache-2.0
/**
 * One undici `Agent` (connection pool) per machine the operator talks to, each checking on every
 * new connection that the agent presents the certificate of *that* machine
 * (`platform/https/peer-node.ts`, DESIGN invariant 8). Per machine, not per endpoint: two records
 * naming the same endpoint (one of them a lie) must never share a connection, or the check made
 * for one would vouch for the other.
 *
 * Cheap for thousands of machines: the CA, certificate and key are parsed once into one shared
 * `SecureContext`; an `Agent` holds nothing but its idle keep-alive connections (one origin each,
 * as the single shared pool did). TLS session resumption is off, so every connection makes a full
 * handshake and the check never rests on a session another connection established.
 *
 * At most {@link maxConnectionsPerMachine} connections to one agent (undici opens one per
 * request in flight otherwise, without bound); more calls at once wait for one. The agent serves
 * the operator role past its per-peer cap (platform/https/admission.ts), so this bound is what
 * keeps a burst of calls from holding ever more of a machine's sockets.
 */
import { createSecureContext } from 'node:tls';
import { Agent, type Dispatcher } from 'undici';
import { expectNodeCertificate } from '../../../platform/https/peer-node.ts';
import type { MtlsFetchOptions } from '../../../platform/https/mtls-fetch.ts';

/** Connections of one pool to its agent at once (the agent serves other peers 16 each). */
export const maxConnectionsPerMachine = 8;

/** The machine a connection is for: its id (the certificate's CN) and where its agent listens. */
export interface MachineAddress {
  readonly id: string;
  readonly endpoint: string;
}

export interface MachineDispatchers {
  /** The pool for `machine`; a machine whose endpoint changed gets a new one. */
  forMachine(machine: MachineAddress): Dispatcher;
  /** Close every pool's connections. */
  close(): Promise<void>;
}

/** How long a connection may take and a body may stay silent, in ms. */
export interface DispatcherTimeouts {
  readonly connectMs: number;
  readonly headersMs: number;
  readonly bodyMs: number;
}

export function machineDispatchers(
  o: MtlsFetchOptions,
  timeouts: DispatcherTimeouts,
): MachineDispatchers {
  const secureContext = createSecureContext({ ca: o.ca, cert: o.cert, key: o.key });
  const pools = new Map<string, { endpoint: string; agent: Agent }>();
  const create = (m: MachineAddress): Agent =>
    new Agent({
      connect: {
        secureContext,
        timeout: timeouts.connectMs,
        maxCachedSessions: 0,
        checkServerIdentity: expectNodeCertificate(m.id, m.endpoint),
      },
      headersTimeout: timeouts.headersMs,
      bodyTimeout: timeouts.bodyMs,
      connections: maxConnectionsPerMachine,
    });
  return {
    forMachine(m) {
      const known = pools.get(m.id);
      if (known?.endpoint === m.endpoint) return known.agent;
      // A re-registered machine: its old connections lead to the old endpoint.
      if (known !== undefined) known.agent.close().catch(() => undefined);
      const agent = create(m);
      pools.set(m.id, { endpoint: m.endpoint, agent });
      return agent;
    },
    async close() {
      const all = [...pools.values()];
      pools.clear();
      await Promise.all(all.map((p) => p.agent.close()));
    },
  };
}
