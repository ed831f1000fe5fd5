// SPDX-License-Identifier: Apache-2.0
/**
 * FleetLock on a listener of its own (config `fleetLock.listen`), for update agents that cannot
 * present a fleet certificate: Zincati's FleetLock client takes only a base URL, so behind the
 * operator API's mutual TLS it could never connect. This listener serves nothing but the FleetLock
 * routes, over TLS with the API's server certificate (no client certificate asked), or plain HTTP
 * with `tls: false`. FleetLock has no authentication of its own (reference §8), so this listener
 * serves only the ids of `fleetLock.clients`, each in its group and with its token where one is
 * set (`fleetlock-callers.ts`): at `/fleetlock/` (token as `Authorization: Bearer`) and at
 * `/fleetlock/token/<token>/` (Zincati's `base_url` can carry nothing else). Bind it to the hosts'
 * management network still: a listed id without a token is guarded by nothing but its secrecy.
 * The mTLS API keeps its FleetLock routes for callers with certificates.
 */
import { createApiApp } from '../../platform/https/app.ts';
import { OperatorRoutes } from '../../protocol/operator.ts';
import { limitedServerFactory, type ListenerLimits } from '../../platform/https/listener.ts';
import { listenUrl, type ListeningApi } from '../../platform/https/server.ts';
import type { OperatorApiDeps } from './context.ts';
import { errorAnswer } from './errors.ts';
import { registerFleetLock } from './fleetlock.ts';
import { clientBinding, type FleetLockClient } from './fleetlock-callers.ts';

export interface FleetLockServerOptions {
  readonly deps: Pick<OperatorApiDeps, 'fleetLock' | 'now' | 'onInternalError'>;
  /** The ids this listener serves (config `fleetLock.clients`); none listed: it serves nobody. */
  readonly clients: readonly FleetLockClient[];
  /** The server certificate and key (PEM); undefined: plain HTTP. */
  readonly tls: { readonly cert: string; readonly key: string } | undefined;
  readonly host: string;
  readonly port: number;
  /** Deadlines and caps. @default {@link fleetLockLimits} over the listener defaults */
  readonly limits?: Partial<ListenerLimits> | undefined;
}

/** Where a client presenting its token in the URL points Zincati's `base_url` (under the listener). */
export const FleetLockTokenPrefix = `${OperatorRoutes.fleetLock}/token/:token`;

/**
 * FleetLock's caps: every machine's update agent may call at once, each from its own address (no
 * client certificate here: peers are counted by address, 32 connections each by default).
 */
export const fleetLockLimits: Partial<ListenerLimits> = { maxConnections: 1024, maxPending: 256 };

/**
 * Start the FleetLock listener; `url` is the base URL clients use (`https://host:port/fleetlock`,
 * Zincati's `base_url`), the same path as on the API.
 */
export async function createFleetLockServer(o: FleetLockServerOptions): Promise<ListeningApi> {
  const tls = o.tls;
  const serverFactory = limitedServerFactory(tls, { ...fleetLockLimits, ...o.limits });
  const app = createApiApp({
    name: 'FleetLock',
    errorAnswer,
    onInternalError: o.deps.onInternalError,
    serverFactory,
  });
  const { fleetLock } = o.deps;
  for (const prefix of [OperatorRoutes.fleetLock, FleetLockTokenPrefix])
    await registerFleetLock(app, {
      store: fleetLock.store,
      groups: fleetLock.groups,
      now: o.deps.now,
      prefix,
      bind: clientBinding(o.clients),
      ...(o.deps.onInternalError && { onInternalError: o.deps.onInternalError }),
      ...(fleetLock.onRecovered && { onRecovered: fleetLock.onRecovered }),
    });
  await app.listen({ host: o.host, port: o.port });
  const base = listenUrl(app, o.host, tls === undefined ? 'http' : 'https');
  return { url: `${base}${OperatorRoutes.fleetLock}`, close: () => app.close() };
}
