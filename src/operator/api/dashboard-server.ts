// SPDX-License-Identifier: Apache-2.0
/**
 * The dashboard (issue 6) on a listener of its own (config `dashboard.listen`): a browser presents
 * no fleet certificate, so the page cannot live behind the API's mutual TLS. This listener serves
 * the page (`src/dashboard/`: HTML, CSS and ES modules, see `dashboard-assets.ts`) and the API's
 * reads — the same routes and views as the mTLS API, built by the same `buildOperatorApp` —
 * and refuses every write: changes go through the API with a certificate. Plain HTTP by default
 * (bind it to loopback or a management network), TLS with the API's server certificate on request.
 */
import { limitedServerFactory, type ListenerLimits } from '../../platform/https/listener.ts';
import { listenUrl, type ListeningApi } from '../../platform/https/server.ts';
import { buildOperatorApp } from './app.ts';
import type { OperatorApiDeps } from './context.ts';
import { loadDashboard, treeOf, type DashboardTree } from './dashboard-assets.ts';

/** Options of {@link createDashboardServer}. */
export interface DashboardServerOptions {
  readonly deps: OperatorApiDeps;
  /** The server certificate and key (PEM); undefined: plain HTTP. */
  readonly tls: { readonly cert: string; readonly key: string } | undefined;
  readonly host: string;
  readonly port: number;
  /** Where the page is read from. @default the tree this module runs from (`src/` or `dist/`) */
  readonly tree?: DashboardTree;
  /** Deadlines and the connection cap. @default the listener defaults (a cap of 256) */
  readonly limits?: Partial<ListenerLimits> | undefined;
}

/** Serve the page and the API's reads; resolves once the listener listens. */
export async function createDashboardServer(o: DashboardServerOptions): Promise<ListeningApi> {
  const assets = await loadDashboard(o.tree ?? treeOf(import.meta.url));
  const tls = o.tls;
  const serverFactory = limitedServerFactory(tls, o.limits);
  const app = await buildOperatorApp(o.deps, {
    // Whoever reaches this listener reads what any fleet identity may read.
    identify: () => ({ name: 'dashboard', role: 'node' }),
    readOnly: true,
    serverFactory,
  });
  // One route per allowed file: anything else, `..` included, is the API's 404.
  for (const [path, { contentType, body }] of assets) {
    app.get(path, (_request, reply) =>
      reply.header('content-type', contentType).header('cache-control', 'no-cache').send(body),
    );
  }
  await app.listen({ host: o.host, port: o.port });
  const url = `${listenUrl(app, o.host, tls === undefined ? 'http' : 'https')}/`;
  return { url, close: () => app.close() };
}
