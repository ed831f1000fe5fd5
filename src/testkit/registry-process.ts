// SPDX-License-Identifier: Apache-2.0
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { eventually, startProcess, tempDir, type ManagedProcess } from './process.ts';
import { freePort } from './ports.ts';
import {
  startTokenServer,
  type TokenServer,
  type TokenServerOptions,
  type TokenUser,
} from './token-server.ts';

/** How the real registry authenticates. */
export type RegistryAuth =
  | { readonly kind: 'none' }
  | { readonly kind: 'htpasswd'; readonly users: readonly TokenUser[] }
  | ({ readonly kind: 'token' } & Omit<TokenServerOptions, 'dir'>);

/** Options of {@link startRegistry}. */
export interface RegistryProcessOptions {
  /** @default { kind: 'none' } */
  readonly auth?: RegistryAuth;
  /** The address to listen on (a lab's bridge address, lab/fleet/network.ts). @default 127.0.0.1 */
  readonly host?: string;
}

/** A running Debian `docker-registry` (distribution 2.8) on loopback (or the address asked). */
export interface RunningRegistry {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  /** `127.0.0.1:<port>` */
  readonly host: string;
  readonly dataDir: string;
  readonly process: ManagedProcess;
  /** The token server, in `token` auth mode. */
  readonly tokenServer?: TokenServer;
  /** Stop the registry (and token server) by PID and remove the data directory. */
  stop(): Promise<void>;
}

const run = promisify(execFile);

/**
 * Start `docker-registry serve` with a generated config, filesystem storage in a temp dir, on a
 * free loopback port.
 *
 * Logging is at `warn`: at `info` the registry formats a log line for every request, which costs
 * it a large share of its CPU and skews benchmarks (both sides of a comparison use this registry).
 * Without the `listening on` line the port is chosen up front and readiness is polled on `/v2/`;
 * if another process takes the port first, the start is retried on a new one.
 */
export async function startRegistry(
  options: RegistryProcessOptions = {},
): Promise<RunningRegistry> {
  const dir = await tempDir('registry');
  const auth = options.auth ?? { kind: 'none' };
  const tokenServer =
    auth.kind === 'token' ? await startTokenServer({ ...auth, dir: dir.path }) : undefined;
  const base = {
    version: 0.1,
    log: { level: 'warn', formatter: 'text', accesslog: { disabled: true } },
    storage: {
      filesystem: { rootdirectory: join(dir.path, 'data') },
      cache: { blobdescriptor: 'inmemory' },
      delete: { enabled: true },
      maintenance: { uploadpurging: { enabled: false } },
    },
    ...(await authConfig(auth, dir.path, tokenServer)),
  };
  const cleanup = async (): Promise<void> => {
    await tokenServer?.stop();
    await dir.remove();
  };
  for (let attempt = 1; ; attempt++) {
    const host = `${options.host ?? '127.0.0.1'}:${String(await freePort())}`;
    const configPath = join(dir.path, 'config.yml');
    const http = { addr: host, headers: { 'X-Content-Type-Options': ['nosniff'] } };
    // YAML is a superset of JSON, so the config needs no YAML writer.
    await writeFile(configPath, JSON.stringify({ ...base, http }, null, 2));
    const proc = startProcess('docker-registry', 'docker-registry', ['serve', configPath]);
    const stop = async (): Promise<void> => {
      await proc.stop();
      await cleanup();
    };
    try {
      await waitReady(proc, `http://${host}/v2/`);
      return {
        url: `http://${host}`,
        host,
        dataDir: dir.path,
        process: proc,
        ...(tokenServer !== undefined && { tokenServer }),
        stop,
      };
    } catch (e) {
      await proc.stop();
      if (attempt >= 3) {
        await cleanup();
        throw e;
      }
    }
  }
}

/** Poll `/v2/` until the registry answers (200, or 401 with auth on); fail at once if it exits. */
async function waitReady(proc: ManagedProcess, url: string): Promise<void> {
  let exited = false;
  void proc.exited.then(() => (exited = true));
  await eventually(
    async () => {
      // Checked on every poll, and not retried: a registry that exited will not come back.
      if (exited) return 'exited';
      const res = await fetch(url);
      await res.body?.cancel();
      return 'ready';
    },
    { timeoutMs: 20_000, intervalMs: 50 },
  ).then((outcome) => {
    if (outcome === 'exited')
      throw new Error(
        `docker-registry exited before answering ${url}:\n${proc.output().slice(-2000)}`,
      );
  });
}

async function authConfig(
  auth: RegistryAuth,
  dir: string,
  tokenServer: TokenServer | undefined,
): Promise<Record<string, unknown>> {
  if (auth.kind === 'htpasswd') {
    const lines: string[] = [];
    // registry 2.8 accepts only bcrypt entries; htpasswd (apache2-utils) makes them.
    for (const u of auth.users)
      lines.push((await run('htpasswd', ['-nbB', u.username, u.password])).stdout.trim());
    const path = join(dir, 'htpasswd');
    await writeFile(path, `${lines.join('\n')}\n`);
    return { auth: { htpasswd: { realm: 'molt-test-registry', path } } };
  }
  if (tokenServer !== undefined) {
    return {
      auth: {
        token: {
          realm: tokenServer.realm,
          service: tokenServer.service,
          issuer: tokenServer.issuer,
          rootcertbundle: tokenServer.certPath,
        },
      },
    };
  }
  return {};
}
