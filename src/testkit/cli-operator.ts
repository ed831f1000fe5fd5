// SPDX-License-Identifier: Apache-2.0
/**
 * The operator API on the fixture fleet (`operator-api-fixture.ts`) over mutual TLS, with a fleet
 * CA and client certificates written to a temp directory, for in-process tests of the CLI's
 * commands that connect: `molt rollout|machine|history|plan|config` (tests only).
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { MemoryOperatorStore } from '../operator/adapters/memory-store/operator-store.ts';
import { createOperatorApi, type OperatorApi } from '../operator/api/server.ts';
import type { OperatorApiDeps } from '../operator/api/context.ts';
import { createCa, issueCertificate } from '../platform/pki/certificates.ts';
import { tempDir } from '../platform/process/managed-process.ts';
import { apiFixture } from './operator-api-fixture.ts';

/** A running fixture operator and the files that reach it. */
export interface CliOperator {
  readonly api: OperatorApi;
  readonly store: MemoryOperatorStore;
  /** The temp directory (certificates, and room for a CLI config file). */
  readonly dir: string;
  /** `ca`, and `<who>.pem` / `<who>.key` for `operator` (alice) and `node` (w-9). */
  readonly files: Readonly<Record<string, string>>;
  /** `--endpoint … --ca … --cert … --key …` as `who`. */
  flags(who: 'operator' | 'node'): string[];
  close(): Promise<void>;
}

/** Start it; `over` replaces parts of the API's dependencies (a test's Kubernetes plans). */
export async function startCliOperator(
  prefix: string,
  over: (deps: OperatorApiDeps) => Partial<OperatorApiDeps> = () => ({}),
): Promise<CliOperator> {
  const dir = await tempDir(prefix);
  const ca = await createCa();
  const pairs = {
    operator: await issueCertificate({ ca, role: 'operator', name: 'alice' }),
    node: await issueCertificate({ ca, role: 'node', name: 'w-9' }),
  };
  const files: Record<string, string> = { ca: join(dir.path, 'ca.pem') };
  await writeFile(join(dir.path, 'ca.pem'), ca.cert);
  for (const [name, pair] of Object.entries(pairs)) {
    files[`${name}.pem`] = join(dir.path, `${name}.pem`);
    files[`${name}.key`] = join(dir.path, `${name}.key`);
    await writeFile(join(dir.path, `${name}.pem`), pair.cert);
    await writeFile(join(dir.path, `${name}.key`), pair.key, { mode: 0o600 });
  }
  const f = await apiFixture();
  const server = await issueCertificate({ ca, role: 'node', name: 'operator-1' });
  const deps = { ...f.deps, ...over(f.deps) };
  const api = await createOperatorApi({ deps, tls: { ca: ca.cert, ...server } });
  return {
    api,
    store: f.store,
    dir: dir.path,
    files,
    flags: (who) => [
      ...['--endpoint', api.url, '--ca', files['ca'] ?? ''],
      ...['--cert', files[`${who}.pem`] ?? '', '--key', files[`${who}.key`] ?? ''],
    ],
    close: async () => {
      await api.close();
      await dir.remove();
    },
  };
}
