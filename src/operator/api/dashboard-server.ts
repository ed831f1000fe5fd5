// SPDX-License-Identifier: Apache-2.0
/**
 * The dashboard (issue 6) on a listener of its own (config `dashboard.listen`): a browser presents
 * no fleet certificate, so the page cannot live behind the API's mutual TLS. This listener serves
 * the page (`src/operator/dashboard/`: plain HTML, CSS and JavaScript, no build step) and the
 * API's reads — the same routes and views as the mTLS API, built by the same `buildOperatorApp` —
 * and refuses every write: changes go through the API with a certificate. Plain HTTP by default
 * (bind it to loopback or a management network), TLS with the API's server certificate on request.
 */
import { readFile } from 'node:fs/promises';
import { createServer as createHttpsServer } from 'node:https';
import { join } from 'node:path';
import type { FastifyServerFactory } from 'fastify';
import { listenUrl, type ListeningApi } from '../../platform/https/server.ts';
import { buildOperatorApp } from './app.ts';
import type { OperatorApiDeps } from './context.ts';

export interface DashboardServerOptions {
  readonly deps: OperatorApiDeps;
  /** The server certificate and key (PEM); undefined: plain HTTP. */
  readonly tls: { readonly cert: string; readonly key: string } | undefined;
  readonly host: string;
  readonly port: number;
}

const assets: Readonly<Record<string, string>> = {
  '/': 'index.html',
  '/app.js': 'app.js',
  '/style.css': 'style.css',
};
const types: Readonly<Record<string, string>> = {
  html: 'text/html; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
};

export async function createDashboardServer(o: DashboardServerOptions): Promise<ListeningApi> {
  const tls = o.tls;
  const serverFactory: FastifyServerFactory | undefined =
    tls === undefined
      ? undefined
      : (handler) => createHttpsServer({ ...tls, minVersion: 'TLSv1.2' }, handler);
  const app = await buildOperatorApp(o.deps, {
    // Whoever reaches this listener reads what any fleet identity may read.
    identify: () => ({ name: 'dashboard', role: 'node' }),
    readOnly: true,
    ...(serverFactory !== undefined && { serverFactory }),
  });
  const dir = join(import.meta.dirname, '..', 'dashboard');
  for (const [path, file] of Object.entries(assets)) {
    const body = await readFile(join(dir, file), 'utf8');
    const type = types[file.slice(file.lastIndexOf('.') + 1)] ?? 'text/plain';
    app.get(path, (_request, reply) =>
      reply.header('content-type', type).header('cache-control', 'no-cache').send(body),
    );
  }
  await app.listen({ host: o.host, port: o.port });
  const url = `${listenUrl(app, o.host, tls === undefined ? 'http' : 'https')}/`;
  return { url, close: () => app.close() };
}
