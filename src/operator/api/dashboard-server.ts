// SPDX-License-Identifier: Apache-2.0
/**
 * The dashboard (issue 6) on a listener of its own (config `dashboard.listen`): a browser presents
 * no fleet certificate, so the page cannot live behind the API's mutual TLS. This listener serves
 * the page (`src/dashboard/`: HTML, CSS and ES modules, see `dashboard-assets.ts`) and the reads
 * the page makes, as `dashboard-routes.ts` lists them — not the API's whole read surface: nobody
 * is identified here, so no agent endpoints, no history of who did what, no `/metrics` (issue 14).
 * Every write is refused: changes go through the API with a certificate. Plain HTTP by default
 * (bind it to loopback or a management network), TLS with the API's server certificate on request.
 */
import { ErrorCode, MoltError } from '../../core/errors.ts';
import { createApiApp } from '../../platform/https/app.ts';
import { limitedServerFactory, type ListenerLimits } from '../../platform/https/listener.ts';
import { listenUrl, type ListeningApi } from '../../platform/https/server.ts';
import type { OperatorApiDeps } from './context.ts';
import { loadDashboard, treeOf, type DashboardTree } from './dashboard-assets.ts';
import { dashboardRoutes } from './dashboard-routes.ts';
import { errorAnswer } from './errors.ts';

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
  const app = createApiApp({
    name: 'dashboard',
    errorAnswer,
    onInternalError: o.deps.onInternalError,
    serverFactory,
  });
  app.addHook('onRequest', async (request, reply) => {
    if (request.method === 'GET' || request.method === 'HEAD') return undefined;
    const answer = errorAnswer(
      new MoltError(
        ErrorCode.Forbidden,
        `${request.method} ${request.url}: this listener only reads (the dashboard's)`,
        {
          hint: 'change things through the operator API with a fleet certificate (`molt rollout …`)',
        },
      ),
    );
    return reply.code(answer.status).send(answer.body);
  });
  dashboardRoutes(app, o.deps);
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
