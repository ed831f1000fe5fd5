// SPDX-License-Identifier: Apache-2.0
import { execFile } from 'node:child_process';
import {
  createHash,
  createPrivateKey,
  createPublicKey,
  randomUUID,
  sign,
  type KeyObject,
} from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';

/** A user the token server knows. */
export interface TokenUser {
  readonly username: string;
  readonly password: string;
}

/** Options of {@link startTokenServer}. */
export interface TokenServerOptions {
  /** Directory for the signing key and certificate. */
  readonly dir: string;
  readonly users: readonly TokenUser[];
  /** @default 'molt-test-registry' */
  readonly service?: string;
  /** @default 'molt-test-token-issuer' */
  readonly issuer?: string;
  /** `expires_in` in the answer, and the JWT lifetime. @default 300 */
  readonly expiresInSec?: number;
  /** Which field carries the token. @default 'token' */
  readonly field?: 'token' | 'access_token';
}

/** A token request the server answered. */
export interface TokenRequest {
  readonly service: string | null;
  readonly scopes: readonly string[];
  /** The Basic user, or undefined for an anonymous request. */
  readonly user: string | undefined;
  readonly status: number;
}

/** A running Docker-token-spec server whose JWTs registry 2.8 accepts. */
export interface TokenServer {
  /** The realm URL for the registry config and its challenges. */
  readonly realm: string;
  readonly service: string;
  readonly issuer: string;
  /** PEM certificate of the signing key: the registry's `rootcertbundle`. */
  readonly certPath: string;
  readonly requests: TokenRequest[];
  stop(): Promise<void>;
}

const run = promisify(execFile);

/**
 * libtrust's key ID, which registry 2.8 looks up the JWT header's `kid` by: SHA-256 of the
 * DER SubjectPublicKeyInfo, first 240 bits, base32 without padding, in 12 groups of 4 joined by `:`.
 */
export function libtrustKeyId(publicKey: KeyObject): string {
  const der = publicKey.export({ type: 'spki', format: 'der' });
  const digest = createHash('sha256').update(der).digest().subarray(0, 30);
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  let bits = '';
  for (const byte of digest) bits += byte.toString(2).padStart(8, '0');
  let encoded = '';
  for (let i = 0; i < bits.length; i += 5)
    encoded += alphabet.charAt(parseInt(bits.slice(i, i + 5), 2));
  return encoded.match(/.{4}/g)?.join(':') ?? '';
}

/** Start a token server on 127.0.0.1:0 with a fresh P-256 key and self-signed certificate (openssl). */
export async function startTokenServer(options: TokenServerOptions): Promise<TokenServer> {
  const keyPath = join(options.dir, 'token-key.pem');
  const certPath = join(options.dir, 'token-cert.pem');
  await run('openssl', [
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-keyout',
    keyPath,
    '-out',
    certPath,
    '-days',
    '2',
    '-subj',
    '/CN=molt-test-token-issuer',
  ]);
  const key = createPrivateKey(await readFile(keyPath));
  const signer: Signer = {
    key,
    kid: libtrustKeyId(createPublicKey(key)),
    service: options.service ?? 'molt-test-registry',
    issuer: options.issuer ?? 'molt-test-token-issuer',
    expiresInSec: options.expiresInSec ?? 300,
  };
  const requests: TokenRequest[] = [];
  const server = createServer((req, res) => {
    answer({ req, res, signer, users: options.users, field: options.field ?? 'token', requests });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    realm: `http://127.0.0.1:${port}/token`,
    service: signer.service,
    issuer: signer.issuer,
    certPath,
    requests,
    stop: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => {
        server.close(() => {
          resolve();
        });
      });
    },
  };
}

interface Signer {
  readonly key: KeyObject;
  readonly kid: string;
  readonly service: string;
  readonly issuer: string;
  readonly expiresInSec: number;
}

interface Answer {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly signer: Signer;
  readonly users: readonly TokenUser[];
  readonly field: string;
  readonly requests: TokenRequest[];
}

function answer(a: Answer): void {
  const url = new URL(a.req.url ?? '/', 'http://token');
  const scopes = url.searchParams.getAll('scope');
  const { basic, user } = authenticate(a.req.headers.authorization, a.users);
  const status = basic && user === undefined ? 401 : 200;
  a.requests.push({
    service: url.searchParams.get('service'),
    scopes,
    user: user?.username,
    status,
  });
  const json = { 'content-type': 'application/json' };
  if (status === 401) {
    const body = { errors: [{ code: 'UNAUTHORIZED', message: 'bad credentials' }] };
    a.res.writeHead(401, json).end(JSON.stringify(body));
    return;
  }
  // Users get what they ask for on any repository; anonymous callers get nothing (the registry then says 401).
  const access = user === undefined ? [] : scopes.map(parseScope).filter((s) => s !== undefined);
  const now = Math.floor(Date.now() / 1000);
  const s = a.signer;
  const claims = {
    iss: s.issuer,
    sub: user?.username ?? '',
    aud: s.service,
    exp: now + s.expiresInSec,
    nbf: now - 10,
    iat: now,
    jti: randomUUID(),
    access,
  };
  const body = {
    [a.field]: jwt(s, claims),
    expires_in: s.expiresInSec,
    issued_at: new Date(now * 1000).toISOString(),
  };
  a.res.writeHead(200, json).end(JSON.stringify(body));
}

/** Whether Basic credentials came, and the user they name when they are right. */
function authenticate(
  header: string | undefined,
  users: readonly TokenUser[],
): { basic: boolean; user: TokenUser | undefined } {
  const m = /^Basic (.+)$/i.exec(header ?? '');
  if (m === null) return { basic: false, user: undefined };
  const [username, password] = Buffer.from(m[1] ?? '', 'base64')
    .toString()
    .split(/:(.*)/s);
  return {
    basic: true,
    user: users.find((u) => u.username === username && u.password === password),
  };
}

function parseScope(scope: string): { type: string; name: string; actions: string[] } | undefined {
  const first = scope.indexOf(':');
  const last = scope.lastIndexOf(':');
  if (first < 0 || last <= first) return undefined;
  return {
    type: scope.slice(0, first),
    name: scope.slice(first + 1, last),
    actions: scope.slice(last + 1).split(','),
  };
}

function jwt(s: Signer, claims: Record<string, unknown>): string {
  const b64 = (v: unknown): string => Buffer.from(JSON.stringify(v)).toString('base64url');
  const input = `${b64({ typ: 'JWT', alg: 'ES256', kid: s.kid })}.${b64(claims)}`;
  // JWS wants the raw r||s signature, not DER.
  const signature = sign('sha256', Buffer.from(input), { key: s.key, dsaEncoding: 'ieee-p1363' });
  return `${input}.${signature.toString('base64url')}`;
}
