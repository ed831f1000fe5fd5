// SPDX-License-Identifier: Apache-2.0
/**
 * The lab's OCI registry (docs/adr/0007): Debian's `docker-registry` (distribution 2.8) started on
 * a free port of loopback or the lab's bridge address, with filesystem storage in a directory of
 * its own, stopped by the PID started here.
 */
import { handleAll, retry } from 'cockatiel';
import { join } from 'node:path';
import { writePrivateFile } from '../../platform/fs/private-file.ts';
import { freePort } from '../../platform/process/free-port.ts';
import {
  startProcess,
  tempDir,
  type ManagedProcess,
} from '../../platform/process/managed-process.ts';
import { waitReady } from '../../platform/process/readiness.ts';

/** Options of {@link startRegistry}. */
export interface RegistryOptions {
  /** The address to listen on (a lab's bridge address, lab/fleet/network.ts). @default 127.0.0.1 */
  readonly host?: string;
  /**
   * The registry config's `auth` section (distribution's htpasswd or token schemes), for tests of
   * registry authentication; given the registry's own directory. @default none: anonymous access
   */
  readonly auth?: (dir: string) => Promise<Record<string, unknown>>;
}

/** A running Debian `docker-registry` (distribution 2.8) on loopback (or the address asked). */
export interface RunningRegistry {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  /** `127.0.0.1:<port>` */
  readonly host: string;
  readonly dataDir: string;
  readonly process: ManagedProcess;
  /** Stop the registry by PID and remove its directory. */
  stop(): Promise<void>;
}

/**
 * Start `docker-registry serve` with a generated config, filesystem storage in a temp dir, on a
 * free port.
 *
 * Logging is at `warn`: at `info` the registry formats a log line for every request, which costs
 * it a large share of its CPU and skews benchmarks (both sides of a comparison use this registry).
 * Without the `listening on` line the port is chosen up front and readiness is polled on `/v2/`;
 * if another process takes the port first, the start is retried on a new one.
 */
export async function startRegistry(options: RegistryOptions = {}): Promise<RunningRegistry> {
  const dir = await tempDir('registry');
  try {
    const base = {
      version: 0.1,
      log: { level: 'warn', formatter: 'text', accesslog: { disabled: true } },
      storage: {
        filesystem: { rootdirectory: join(dir.path, 'data') },
        cache: { blobdescriptor: 'inmemory' },
        delete: { enabled: true },
        maintenance: { uploadpurging: { enabled: false } },
      },
      ...(options.auth !== undefined && { auth: await options.auth(dir.path) }),
    };
    return await listen(base, dir, options.host ?? '127.0.0.1');
  } catch (e) {
    await dir.remove();
    throw e;
  }
}

async function listen(
  base: object,
  dir: { path: string; remove: () => Promise<void> },
  address: string,
): Promise<RunningRegistry> {
  // A port freePort() found may be taken before the registry binds it: then another (3 tries).
  return retry(handleAll, { maxAttempts: 2 }).execute(async () => {
    const host = `${address}:${String(await freePort())}`;
    const configPath = join(dir.path, 'config.yml');
    const http = { addr: host, headers: { 'X-Content-Type-Options': ['nosniff'] } };
    // YAML is a superset of JSON, so the config needs no YAML writer.
    // Its auth section names the htpasswd file or token key: owner-only, like every lab secret.
    await writePrivateFile(configPath, JSON.stringify({ ...base, http }, null, 2));
    const proc = startProcess('docker-registry', 'docker-registry', ['serve', configPath]);
    try {
      await waitRegistry(proc, `http://${host}/v2/`);
    } catch (e) {
      await proc.stop();
      throw e;
    }
    const stop = async (): Promise<void> => {
      await proc.stop();
      await dir.remove();
    };
    return { url: `http://${host}`, host, dataDir: dir.path, process: proc, stop };
  });
}

/**
 * Poll `/v2/` until the registry answers (200, or 401 with auth on): for as long as it makes
 * progress (a busy machine), and not past its exit (readiness.ts).
 */
async function waitRegistry(proc: ManagedProcess, url: string): Promise<void> {
  await waitReady({
    what: `the registry at ${url}`,
    processes: [proc],
    probe: async () => {
      const res = await fetch(url);
      await res.body?.cancel();
    },
    intervalMs: 50,
  });
}
