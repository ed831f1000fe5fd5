// SPDX-License-Identifier: Apache-2.0
/**
 * A machine provider for tests and the lab (docs/adr/0005, "Replace strategy"): an in-process
 * HTTP server speaking the provider protocol (`adapters/http-provider` documents it) around a
 * pluggable `reimage` function that does the actual work — for a lab machine: stop it, wipe its
 * root, install the new image from scratch and resolve once its new agent answers. A rejected
 * `reimage` reports `failed` with the error's message.
 *
 * Like a real provider it is idempotent per machine and digest: a second POST while a replace of
 * the same machine to the same digest runs answers the running operation's id.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** What the operator sent in `POST /v1/replace`. */
export interface LabReplaceRequest {
  readonly machine: string;
  readonly endpoint: string;
  readonly image: string;
  readonly digest: string;
  readonly version: string;
}

export interface LabProviderOptions {
  /** Re-images one machine; resolves when its new agent answers, rejects when it failed. */
  readonly reimage: (request: LabReplaceRequest) => Promise<void>;
  /** @default '127.0.0.1' */
  readonly host?: string;
  /** @default 0 (any free port) */
  readonly port?: number;
}

export interface LabProvider {
  /** `http://host:port`: a pool's `provider.url`. */
  readonly url: string;
  /** Every accepted POST, in order (a repeated one included). */
  readonly requests: readonly LabReplaceRequest[];
  close(): Promise<void>;
}

interface Operation {
  readonly request: LabReplaceRequest;
  state: 'running' | 'succeeded' | 'failed';
  message?: string;
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
}

function asRequest(v: unknown): LabReplaceRequest | undefined {
  if (typeof v !== 'object' || v === null) return undefined;
  const o = v as Record<string, unknown>;
  const fields = ['machine', 'endpoint', 'image', 'digest', 'version'] as const;
  if (!fields.every((f) => typeof o[f] === 'string' && o[f] !== '')) return undefined;
  return Object.fromEntries(fields.map((f) => [f, o[f]])) as unknown as LabReplaceRequest;
}

export async function startLabProvider(o: LabProviderOptions): Promise<LabProvider> {
  const operations = new Map<string, Operation>();
  const requests: LabReplaceRequest[] = [];
  let next = 0;
  const send = (res: ServerResponse, status: number, body: unknown): void => {
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  };
  const accept = (request: LabReplaceRequest): string => {
    requests.push(request);
    for (const [id, op] of operations)
      if (
        op.state === 'running' &&
        op.request.machine === request.machine &&
        op.request.digest === request.digest
      )
        return id;
    next += 1;
    const id = `lab-${String(next)}`;
    const op: Operation = { request, state: 'running' };
    operations.set(id, op);
    o.reimage(request).then(
      () => {
        op.state = 'succeeded';
      },
      (e: unknown) => {
        op.state = 'failed';
        op.message = e instanceof Error ? e.message : String(e);
      },
    );
    return id;
  };
  const statusOf = (id: string): readonly [number, unknown] => {
    const op = operations.get(decodeURIComponent(id));
    if (op === undefined) return [404, { message: 'no such operation' }];
    const message = op.message === undefined ? {} : { message: op.message };
    return [200, { state: op.state, ...message }];
  };
  const answer = async (req: IncomingMessage): Promise<readonly [number, unknown]> => {
    const status = /^\/v1\/replace\/([^/]+)$/.exec(req.url ?? '');
    if (req.method === 'GET' && status !== null) return statusOf(status[1] ?? '');
    if (req.method !== 'POST' || req.url !== '/v1/replace')
      return [404, { message: `no route ${req.method ?? ''} ${req.url ?? ''}` }];
    let request: LabReplaceRequest | undefined;
    try {
      request = asRequest(await readJson(req));
    } catch {
      return [400, { message: 'the body is not JSON' }];
    }
    if (request === undefined)
      return [400, { message: 'needs machine, endpoint, image, digest, version' }];
    return [202, { operationId: accept(request) }];
  };
  const server: Server = createServer((req, res) => {
    void answer(req).then(([status, body]) => {
      send(res, status, body);
    });
  });
  await new Promise<void>((resolve) => server.listen(o.port ?? 0, o.host ?? '127.0.0.1', resolve));
  const { address, port } = server.address() as AddressInfo;
  return {
    url: `http://${address}:${String(port)}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => {
          resolve();
        });
      }),
  };
}
