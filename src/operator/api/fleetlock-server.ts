// SPDX-License-Identifier: Apache-2.0
/**
 * FleetLock on a listener of its own (config `fleetLock.listen`), for update agents that cannot
 * present a fleet certificate: Zincati's FleetLock client takes only a base URL, so behind the
 * operator API's mutual TLS it could never connect. This listener serves nothing but the FleetLock
 * routes, over TLS with the API's server certificate (no client certificate asked), or plain HTTP
 * with `tls: false`. FleetLock has no authentication of its own (reference §"Authentication" —
 * "not specified"): whoever reaches the listener can take and release slots, which is why it is a
 * separate port that can be bound to the hosts' management network only. The mTLS API keeps its
 * FleetLock routes for callers with certificates.
 */
import { createApiApp } from '../../platform/https/app.ts';
import { OperatorRoutes } from '../../protocol/operator.ts';
import { limitedServerFactory, type ListenerLimits } from '../../platform/https/listener.ts';
import { listenUrl, type ListeningApi } from '../../platform/https/server.ts';
import type { OperatorApiDeps } from './context.ts';
import { errorAnswer } from './errors.ts';
import { registerFleetLock } from './fleetlock.ts';

export interface FleetLockServerOptions {
  readonly deps: Pick<OperatorApiDeps, 'fleetLock' | 'now' | 'onInternalError'>;
  /** The server certificate and key (PEM); undefined: plain HTTP. */
  readonly tls: { readonly cert: string; readonly key: string } | undefined;
  readonly host: string;
  readonly port: number;
  /** Deadlines and the connection cap. @default the listener defaults, a cap of 1024 */
  readonly limits?: Partial<ListenerLimits> | undefined;
}

/** FleetLock's connection cap: every machine's update agent may call at once. */
export const fleetLockMaxConnections = 1024;

/**
 * Start the FleetLock listener; `url` is the base URL clients use (`https://host:port/fleetlock`,
 * Zincati's `base_url`), the same path as on the API.
 */
export async function createFleetLockServer(o: FleetLockServerOptions): Promise<ListeningApi> {
  const tls = o.tls;
  const serverFactory = limitedServerFactory(tls, {
    maxConnections: fleetLockMaxConnections,
    ...o.limits,
  });
  const app = createApiApp({
    name: 'FleetLock',
    errorAnswer,
    onInternalError: o.deps.onInternalError,
    serverFactory,
  });
  await registerFleetLock(app, {
    store: o.deps.fleetLock.store,
    groups: o.deps.fleetLock.groups,
    now: o.deps.now,
    prefix: OperatorRoutes.fleetLock,
    ...(o.deps.onInternalError && { onInternalError: o.deps.onInternalError }),
  });
  await app.listen({ host: o.host, port: o.port });
  const base = listenUrl(app, o.host, tls === undefined ? 'http' : 'https');
  return { url: `${base}${OperatorRoutes.fleetLock}`, close: () => app.close() };
}
