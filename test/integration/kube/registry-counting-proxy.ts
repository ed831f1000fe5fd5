// SPDX-License-Identifier: Apache-2.0
/**
 * P12's window on the registry: a loopback HTTP proxy in front of the real registry that forwards
 * every request untouched and counts what it forwarded, by kind — so the blob GETs the operator's
 * scans cost are what the registry was asked, not what a client says it asked. (The lab registry
 * runs with its access log off: at `info` it costs the registry much of its CPU.)
 */
import { createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Requests forwarded, by what they asked the registry. */
export interface RegistryCounts {
  tagList: number;
  manifestHead: number;
  manifestGet: number;
  blobHead: number;
  blobGet: number;
  other: number;
}

export const noCounts = (): RegistryCounts => ({
  tagList: 0,
  manifestHead: 0,
  manifestGet: 0,
  blobHead: 0,
  blobGet: 0,
  other: 0,
});

/** What `b - a` counts. */
export function countsSince(a: RegistryCounts, b: RegistryCounts): RegistryCounts {
  const d = noCounts();
  for (const k of Object.keys(d) as (keyof RegistryCounts)[]) d[k] = b[k] - a[k];
  return d;
}

/** The kind of one distribution API request (`/v2/<name>/{tags/list,manifests/<ref>,blobs/<digest>}`). */
export function requestKind(method: string, path: string): keyof RegistryCounts {
  const p = path.split('?')[0] ?? '';
  if (/^\/v2\/.+\/tags\/list$/.test(p)) return 'tagList';
  if (/^\/v2\/.+\/manifests\/[^/]+$/.test(p))
    return method === 'HEAD' ? 'manifestHead' : method === 'GET' ? 'manifestGet' : 'other';
  if (/^\/v2\/.+\/blobs\/sha256:[a-f0-9]{64}$/.test(p))
    return method === 'HEAD' ? 'blobHead' : method === 'GET' ? 'blobGet' : 'other';
  return 'other';
}

export interface CountingProxy {
  /** `127.0.0.1:<port>`: a registry host as image references name it. */
  readonly host: string;
  /** The counts so far (a copy). */
  counts(): RegistryCounts;
  close(): Promise<void>;
}

/** Proxy `127.0.0.1:<free port>` → `target` (`host:port`, plain HTTP), counting every request. */
export async function startCountingProxy(target: string): Promise<CountingProxy> {
  const [hostname, port] = target.split(':');
  const counts = noCounts();
  const forward = (req: IncomingMessage, res: ServerResponse): void => {
    counts[requestKind(req.method ?? 'GET', req.url ?? '/')]++;
    const upstream = request(
      {
        hostname,
        port: Number(port),
        method: req.method,
        path: req.url,
        headers: { ...req.headers, host: target },
      },
      (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      },
    );
    upstream.on('error', (e) => {
      if (!res.headersSent) res.writeHead(502);
      res.end(String(e));
    });
    req.pipe(upstream);
  };
  const server = createServer(forward);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port: own } = server.address() as AddressInfo;
  return {
    host: `127.0.0.1:${String(own)}`,
    counts: () => ({ ...counts }),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => {
          resolve();
        });
      }),
  };
}
