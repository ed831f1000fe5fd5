// SPDX-License-Identifier: Apache-2.0
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { FakeRegistryStore } from './fake-registry-store.ts';
import { applyFault, takeFault, type Fault, type FaultRule } from './fake-registry-faults.ts';
import * as routes from './fake-registry-routes.ts';
import type { Reply, RouteContext, TagPagingMode } from './fake-registry-routes.ts';

export type { Fault, FaultRule } from './fake-registry-faults.ts';
export type { TagPagingMode } from './fake-registry-routes.ts';

/** How the fake registry behaves. */
export interface FakeRegistryOptions {
  /** Require HTTP Basic with these credentials on /v2/ (challenging with `WWW-Authenticate: Basic`). */
  readonly basicAuth?: { readonly username: string; readonly password: string };
  /** @default { link: 'last' } */
  readonly tagPaging?: TagPagingMode;
  /** Referrers per page. @default 1000 */
  readonly referrersPageSize?: number;
  /** Serve the referrers API; when false, answer it with registry 2.8.2's plain-text 404. @default true */
  readonly referrersApi?: boolean;
}

/** A request the fake received. */
export interface RecordedRequest {
  readonly method: string;
  /** Path and query. */
  readonly path: string;
  readonly host: string;
  readonly authorization: string | undefined;
  readonly accept: string | undefined;
}

/** A running spec-exact fake registry on 127.0.0.1. */
export interface FakeRegistry {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  /** `127.0.0.1:<port>` */
  readonly host: string;
  /** `http://localhost:<port>`: the same server under another host name, to play a storage host. */
  readonly altOrigin: string;
  readonly store: FakeRegistryStore;
  readonly requests: RecordedRequest[];
  /** The most requests that were being handled at the same time (to check client concurrency caps). */
  peakInFlight(): number;
  /** Add a fault rule; rules are tried in order, each for `times` matching requests. */
  inject(rule: FaultRule): void;
  clearFaults(): void;
  /** Redirect blob GETs to `origin`'s `/_storage/…` (undefined: serve them directly). */
  redirectBlobsTo(origin: string | undefined): void;
  close(): Promise<void>;
}

const routePattern =
  /^\/v2\/(.+?)\/(tags\/list|manifests\/([^/]+)|blobs\/uploads\/([^/]*)|blobs\/([^/]+)|referrers\/([^/]+))$/;

/** Start a fake registry on 127.0.0.1:0. */
export async function startFakeRegistry(options: FakeRegistryOptions = {}): Promise<FakeRegistry> {
  const store = new FakeRegistryStore();
  const requests: RecordedRequest[] = [];
  const faults: FaultRule[] = [];
  const state = { blobRedirect: undefined as string | undefined, inFlight: 0, peak: 0 };
  const server = createServer((req, res) => {
    state.inFlight++;
    state.peak = Math.max(state.peak, state.inFlight);
    res.once('close', () => state.inFlight--);
    handle({ req, res, store, requests, faults, options, blobRedirect: state.blobRedirect }).catch(
      (e: unknown) => {
        res.destroy(e instanceof Error ? e : undefined);
      },
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    host: `127.0.0.1:${port}`,
    altOrigin: `http://localhost:${port}`,
    store,
    requests,
    peakInFlight: () => state.peak,
    inject: (rule) => faults.push({ ...rule }),
    clearFaults: () => faults.splice(0),
    redirectBlobsTo: (origin) => {
      state.blobRedirect = origin;
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => {
        server.close(() => {
          resolve();
        });
      });
    },
  };
}

interface Exchange {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly store: FakeRegistryStore;
  readonly requests: RecordedRequest[];
  readonly faults: FaultRule[];
  readonly options: FakeRegistryOptions;
  readonly blobRedirect: string | undefined;
}

async function handle(x: Exchange): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const chunk of x.req) chunks.push(chunk as Buffer);
  const body = new Uint8Array(Buffer.concat(chunks));
  const method = x.req.method ?? 'GET';
  const path = x.req.url ?? '/';
  x.requests.push({
    method,
    path,
    host: x.req.headers.host ?? '',
    authorization: x.req.headers.authorization,
    accept: x.req.headers.accept,
  });
  const fault = takeFault(x.faults, method, path);
  if (fault?.kind === 'reset') {
    x.req.socket.destroy();
    return;
  }
  if (fault?.kind === 'delay') await new Promise((resolve) => setTimeout(resolve, fault.ms));
  const reply = fault?.kind === 'status' ? statusReply(fault) : route(x, method, body);
  write(x.res, applyFault(reply, fault), method === 'HEAD', fault);
}

function statusReply(f: Extract<Fault, { kind: 'status' }>): Reply {
  const body = new TextEncoder().encode(f.body ?? '');
  return {
    status: f.status,
    headers: { 'content-type': f.contentType ?? 'text/plain; charset=utf-8', ...f.headers },
    body,
  };
}

function unauthorized(x: Exchange, path: string): Reply | undefined {
  const basic = x.options.basicAuth;
  if (basic === undefined || path.startsWith('/_storage/')) return undefined;
  const expected = `Basic ${Buffer.from(`${basic.username}:${basic.password}`).toString('base64')}`;
  if (x.req.headers.authorization === expected) return undefined;
  const r = routes.errorReply(401, 'UNAUTHORIZED', 'authentication required');
  return { ...r, headers: { ...r.headers, 'www-authenticate': 'Basic realm="fake-registry"' } };
}

function route(x: Exchange, method: string, body: Uint8Array): Reply {
  const url = new URL(x.req.url ?? '/', 'http://fake');
  const denied = unauthorized(x, url.pathname);
  if (denied !== undefined) return denied;
  if (url.pathname === '/v2/' || url.pathname === '/v2')
    return {
      status: 200,
      headers: { 'content-type': 'application/json' },
      body: new TextEncoder().encode('{}'),
    };
  const storage = /^\/_storage\/(.+)\/(sha256:[a-f0-9]{64})$/.exec(url.pathname);
  if (storage)
    return routes.getBlob(
      context(x, { url, body, name: storage[1] ?? '', method, redirect: false }),
      storage[2] ?? '',
    );
  const m = routePattern.exec(url.pathname);
  if (m === null) return plain404();
  const c = context(x, { url, body, name: m[1] ?? '', method, redirect: true });
  return (
    dispatch(c, m, x.options.referrersApi ?? true) ??
    routes.errorReply(405, 'UNSUPPORTED', `${method} is not supported here`)
  );
}

function dispatch(c: RouteContext, m: RegExpExecArray, referrersApi: boolean): Reply | undefined {
  const [, , kind = '', manifestRef, uploadId, blobDigest, referrersDigest] = m;
  if (c.method === 'GET' || c.method === 'HEAD') {
    return dispatchRead(c, { kind, manifestRef, blobDigest, referrersDigest }, referrersApi);
  }
  if (c.method === 'PUT' && manifestRef !== undefined) return routes.putManifest(c, manifestRef);
  if (c.method === 'POST' && uploadId === '') return routes.startUpload(c);
  if (c.method === 'PUT' && uploadId !== undefined && uploadId !== '') {
    return routes.finishUpload(c, uploadId);
  }
  return undefined;
}

interface ReadTarget {
  readonly kind: string;
  readonly manifestRef: string | undefined;
  readonly blobDigest: string | undefined;
  readonly referrersDigest: string | undefined;
}

function dispatchRead(c: RouteContext, t: ReadTarget, referrersApi: boolean): Reply | undefined {
  if (t.kind === 'tags/list') return routes.tagsList(c);
  if (t.manifestRef !== undefined) return routes.getManifest(c, t.manifestRef);
  if (t.blobDigest !== undefined) return routes.getBlob(c, t.blobDigest);
  if (t.referrersDigest !== undefined) {
    return referrersApi ? routes.referrers(c, t.referrersDigest) : plain404();
  }
  return undefined;
}

/** The Go router's answer for an unknown path: plain text, not the JSON error format. */
function plain404(): Reply {
  return {
    status: 404,
    headers: { 'content-type': 'text/plain; charset=utf-8' },
    body: new TextEncoder().encode('404 page not found\n'),
  };
}

interface ContextInput {
  readonly url: URL;
  readonly body: Uint8Array;
  readonly name: string;
  readonly method: string;
  readonly redirect: boolean;
}

function context(x: Exchange, i: ContextInput): RouteContext {
  return {
    store: x.store,
    method: i.method,
    name: i.name,
    url: i.url,
    body: i.body,
    contentType: (x.req.headers['content-type'] ?? '').split(';')[0]?.trim() ?? '',
    tagPaging: x.options.tagPaging ?? { link: 'last' },
    referrersPageSize: x.options.referrersPageSize ?? 1000,
    blobRedirect: i.redirect && i.method === 'GET' ? x.blobRedirect : undefined,
  };
}

/** Whether the reply carries a `Content-Length` (not for streams meant to run long or forever). */
function declaresLength(fault: Fault | undefined): boolean {
  if (fault?.kind === 'oversize') return fault.declareLength !== false;
  return fault?.kind !== 'stall' && fault?.kind !== 'endless';
}

function write(res: ServerResponse, reply: Reply, head: boolean, fault: Fault | undefined): void {
  const headers: Record<string, string> = {
    'docker-distribution-api-version': 'registry/2.0',
    ...reply.headers,
  };
  const body = reply.body ?? new Uint8Array(0);
  if (declaresLength(fault)) headers['content-length'] = String(body.byteLength);
  res.writeHead(reply.status, headers);
  if (head) {
    res.end();
    return;
  }
  if (fault?.kind === 'endless') {
    writeEndless(res, fault.sent);
    return;
  }
  if (fault?.kind === 'stall') {
    // Send part of the body, then nothing: the client's idle/body timeout must fire.
    res.write(body.subarray(0, Math.min(fault.afterBytes, body.byteLength)));
    return;
  }
  res.end(body);
}

/** Zeros until the client hangs up, honouring backpressure. */
function writeEndless(res: ServerResponse, sent: { bytes: number }): void {
  const chunk = Buffer.alloc(64 * 1024);
  const pump = (): void => {
    while (!res.destroyed) {
      sent.bytes += chunk.byteLength;
      if (!res.write(chunk)) {
        res.once('drain', pump);
        return;
      }
    }
  };
  res.on('error', () => undefined);
  pump();
}
