// SPDX-License-Identifier: Apache-2.0
/**
 * The agent's HTTPS API with mutual TLS only (docs/adr/0004 §6): a peer without a certificate from
 * the fleet CA, or with an expired one, fails the handshake and never reaches a route.
 */
import { createServer } from 'node:https';
import { TLSSocket } from 'node:tls';
import { ErrorCode, MoltError } from '../../core/errors.ts';
import type { JournalStore } from '../ports/journal-store.ts';
import type { AgentController } from './controller.ts';
import { peerIdentity } from './identity.ts';
import { buildAgentApp } from './routes.ts';

/** PEM material of the agent: the fleet CA (trusted for clients) and its own certificate and key. */
export interface AgentTls {
  readonly ca: string;
  readonly cert: string;
  readonly key: string;
}

/** Options of {@link createAgentApi}. */
export interface AgentApiOptions {
  readonly controller: AgentController;
  readonly journal: JournalStore;
  readonly tls: AgentTls;
  /** @default '127.0.0.1' */
  readonly host?: string;
  /** 0 picks a free port. @default 0 */
  readonly port?: number;
  /** Told about every unexpected (500) error; the HTTP answer never carries a stack. */
  readonly onInternalError?: (error: unknown) => void;
}

/** A listening agent API. */
export interface AgentApi {
  /** `https://host:port`. */
  readonly url: string;
  /** Stop listening and cut open event streams (followers reconnect). */
  close(): Promise<void>;
}

/** Start the API; resolves once it listens. */
export async function createAgentApi(o: AgentApiOptions): Promise<AgentApi> {
  const host = o.host ?? '127.0.0.1';
  const tlsOptions = {
    ...o.tls,
    requestCert: true,
    rejectUnauthorized: true,
    minVersion: 'TLSv1.2' as const,
  };
  const app = buildAgentApp(
    {
      controller: o.controller,
      journal: o.journal,
      identify: (request) => {
        const socket = request.raw.socket;
        if (!(socket instanceof TLSSocket))
          throw new MoltError(ErrorCode.TlsRejected, 'the request did not come over TLS');
        return peerIdentity(socket);
      },
      ...(o.onInternalError && { onInternalError: o.onInternalError }),
    },
    { serverFactory: (handler) => createServer(tlsOptions, handler) },
  );
  await app.listen({ host, port: o.port ?? 0 });
  const address = app.server.address();
  const port = typeof address === 'object' && address !== null ? address.port : (o.port ?? 0);
  const hostPart = host.includes(':') ? `[${host}]` : host;
  return { url: `https://${hostPart}:${port}`, close: () => app.close() };
}
