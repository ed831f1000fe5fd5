// SPDX-License-Identifier: Apache-2.0
/**
 * The operator's HTTPS API with mutual TLS only (docs/adr/0005 §5, as the agent's: docs/adr/0004
 * §6): a peer without a certificate from the fleet CA, or with an expired one, fails the handshake
 * and never reaches a route. The server certificate is one `molt pki issue --role node` makes (a
 * node certificate is the one kind that is also a TLS server certificate); the operator's own
 * `pki.cert` stays its client identity toward the agents.
 */
import {
  listenMtls,
  mtlsIdentity,
  type ListeningApi,
  type MtlsEndpoint,
} from '../../platform/https/server.ts';
import type { ListenerLimits } from '../../platform/https/listener.ts';
import { buildOperatorApp } from './app.ts';
import type { OperatorApiDeps } from './context.ts';

/** Options of {@link createOperatorApi}. */
export interface OperatorApiOptions extends MtlsEndpoint {
  readonly deps: OperatorApiDeps;
}

/**
 * The operator API's caps: every machine registers through it, each with its own certificate, and
 * a whole fleet may restart at once (docs/adr/0005 §5), so many handshakes may be pending. The
 * other limits are the listener defaults (32 connections and 8 event streams per certificate).
 */
export const operatorApiLimits: Partial<ListenerLimits> = { maxConnections: 1024, maxPending: 256 };

/** A listening operator API: `url` has the port actually bound; `close()` cuts event streams. */
export type OperatorApi = ListeningApi;

/** Start the API; resolves once it listens. */
export function createOperatorApi(o: OperatorApiOptions): Promise<OperatorApi> {
  return listenMtls({
    tls: o.tls,
    host: o.host,
    port: o.port,
    limits: { ...operatorApiLimits, ...o.limits },
    build: (serverFactory) =>
      buildOperatorApp(o.deps, { identify: mtlsIdentity('the operator'), serverFactory }),
  });
}
