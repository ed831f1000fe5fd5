// SPDX-License-Identifier: Apache-2.0
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { startProcess, tempDir, type ManagedProcess } from './process.ts';
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
}

/** A running Debian `docker-registry` (distribution 2.8) on loopback. */
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

/** Start `docker-registry serve` with a generated config, filesystem storage in a temp dir, on 127.0.0.1:0. */
export async function startRegistry(
  options: RegistryProcessOptions = {},
): Promise<RunningRegistry> {
  const dir = await tempDir('registry');
  const auth = options.auth ?? { kind: 'none' };
  const tokenServer =
    auth.kind === 'token' ? await startTokenServer({ ...auth, dir: dir.path }) : undefined;
  const config = {
    version: 0.1,
    log: { level: 'info', formatter: 'text', accesslog: { disabled: true } },
    storage: {
      filesystem: { rootdirectory: join(dir.path, 'data') },
      delete: { enabled: true },
      maintenance: { uploadpurging: { enabled: false } },
    },
    http: { addr: '127.0.0.1:0', headers: { 'X-Content-Type-Options': ['nosniff'] } },
    ...(await authConfig(auth, dir.path, tokenServer)),
  };
  const configPath = join(dir.path, 'config.yml');
  // YAML is a superset of JSON, so the config needs no YAML writer.
  await writeFile(configPath, JSON.stringify(config, null, 2));
  const proc = startProcess('docker-registry', 'docker-registry', ['serve', configPath]);
  const stop = async (): Promise<void> => {
    await proc.stop();
    await tokenServer?.stop();
    await dir.remove();
  };
  try {
    const m = await proc.waitFor(/listening on 127\.0\.0\.1:(\d+)/, 20_000);
    const host = `127.0.0.1:${m[1] ?? ''}`;
    return {
      url: `http://${host}`,
      host,
      dataDir: dir.path,
      process: proc,
      ...(tokenServer !== undefined && { tokenServer }),
      stop,
    };
  } catch (e) {
    await stop();
    throw e;
  }
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
