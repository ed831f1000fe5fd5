// SPDX-License-Identifier: Apache-2.0
/**
 * The lab's real registry (src/lab/services/registry.ts) with the authentication schemes the
 * registry-auth tests need: htpasswd users, or bearer tokens from a token server of the tests' own.
 */
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import {
  startRegistry as startLabRegistry,
  type RunningRegistry,
} from '../lab/services/registry.ts';
import {
  startTokenServer,
  type TokenServer,
  type TokenServerOptions,
  type TokenUser,
} from './token-server.ts';

export type { RunningRegistry } from '../lab/services/registry.ts';

/** How the real registry authenticates. */
export type RegistryAuth =
  | { readonly kind: 'none' }
  | { readonly kind: 'htpasswd'; readonly users: readonly TokenUser[] }
  | ({ readonly kind: 'token' } & Omit<TokenServerOptions, 'dir'>);

/** Options of {@link startRegistry}. */
export interface RegistryProcessOptions {
  /** @default { kind: 'none' } */
  readonly auth?: RegistryAuth;
  /** The address to listen on. @default 127.0.0.1 */
  readonly host?: string;
}

const run = promisify(execFile);

/** A running registry; in `token` auth mode with its token server (stopped with it). */
export interface TestRegistry extends RunningRegistry {
  readonly tokenServer?: TokenServer;
}

/** Start the real registry with `auth`. */
export async function startRegistry(options: RegistryProcessOptions = {}): Promise<TestRegistry> {
  const auth = options.auth ?? { kind: 'none' };
  const host = options.host === undefined ? {} : { host: options.host };
  if (auth.kind === 'none') return startLabRegistry(host);
  if (auth.kind === 'htpasswd')
    return startLabRegistry({ ...host, auth: (dir) => htpasswd(auth.users, dir) });
  let tokenServer: TokenServer | undefined;
  try {
    const registry = await startLabRegistry({
      ...host,
      auth: async (dir) => {
        tokenServer = await startTokenServer({ ...auth, dir });
        const { realm, service, issuer, certPath } = tokenServer;
        return { token: { realm, service, issuer, rootcertbundle: certPath } };
      },
    });
    const server: TokenServer | undefined = tokenServer;
    if (server === undefined) throw new Error('the token server did not start');
    const stop = async (): Promise<void> => {
      await registry.stop();
      await server.stop();
    };
    return { ...registry, tokenServer: server, stop };
  } catch (e) {
    const server: TokenServer | undefined = tokenServer;
    await server?.stop();
    throw e;
  }
}

/** registry 2.8 accepts only bcrypt entries; htpasswd (apache2-utils) makes them. */
async function htpasswd(
  users: readonly TokenUser[],
  dir: string,
): Promise<Record<string, unknown>> {
  const lines: string[] = [];
  for (const u of users)
    lines.push((await run('htpasswd', ['-nbB', u.username, u.password])).stdout.trim());
  const path = join(dir, 'htpasswd');
  await writeFile(path, `${lines.join('\n')}\n`);
  return { htpasswd: { realm: 'molt-test-registry', path } };
}
