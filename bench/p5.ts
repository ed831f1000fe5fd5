// SPDX-License-Identifier: Apache-2.0
/**
 * Benchmark P5 (docs/adr/0004 §7): writing a 256 MiB slot from the registry. One installer image
 * of 256 MiB of random (incompressible) artifacts in the raw-layer format, in the real
 * docker-registry 2.8 on loopback. Per round:
 * - molt: the agent's PullImage code path (`createOciImageSource().pull`) into a fresh machine
 *   root on disk: resolve, contract check, stream → file with the digest checked in the same
 *   pass, fsync of every file and directory, `staged.json` written last;
 * - curl: `curl -sf -o` of the same blobs (`/v2/<name>/blobs/<digest>`, one process, one
 *   connection) into the same kind of directory; the table also shows curl followed by `sync`
 *   of the written files, which is what molt's fsync costs on top.
 * One warm-up each (discarded), then 5 alternating rounds; medians. CPU time (user + system,
 * every thread) is shown too: molt's from `process.cpuUsage` around the pull, curl's from bash's
 * `time`; it depends far less on what else the machine runs than wall time does. The tar-layer variant (same
 * bytes in one uncompressed tar layer) is measured the same way for the table only.
 * Target: molt / curl ≤ 1.3.
 */
import { execFile } from 'node:child_process';
import { mkdir, rm } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createOciImageSource } from '../src/agent/adapters/oci-image-source/index.ts';
import { createRegistryClient } from '../src/oci/index.ts';
import { pushInstallerImage, type InstallerImage } from '../src/testkit/installer-image.ts';
import { tempDir } from '../src/platform/process/managed-process.ts';
import { startRegistry, type RunningRegistry } from '../src/lab/services/registry.ts';

const run = promisify(execFile);
const repository = 'bench/installer';
const MiB = 1024 * 1024;
const sizes = { vmlinuz: 12 * MiB, 'initrd.img': 20 * MiB, 'rootfs.img': 224 * MiB };
const rounds = 5;

interface Timing {
  readonly molt: number[];
  readonly curl: number[];
  readonly curlSync: number[];
  /** CPU time (user + system, all threads) of molt's pull and of the curl process: less sensitive to machine load than wall time. */
  readonly moltCpu: number[];
  readonly curlCpu: number[];
}

/** A run's wall time and CPU time (user + system), in ms. */
interface Cost {
  readonly ms: number;
  readonly cpuMs: number;
}

async function moltPull(registry: RunningRegistry, tag: string, root: string): Promise<Cost> {
  const cpu = process.cpuUsage();
  const started = performance.now();
  await createOciImageSource({ root, registry: { insecure: true } }).pull(
    `${registry.host}/${repository}:${tag}`,
    'B',
  );
  const ms = performance.now() - started;
  const used = process.cpuUsage(cpu);
  return { ms, cpuMs: (used.user + used.system) / 1000 };
}

/** curl the image's layer blobs into `root`, one process; returns curl's cost (from bash's `time`) and curl + sync ms. */
async function curlPull(
  registry: RunningRegistry,
  image: InstallerImage,
  root: string,
): Promise<[Cost, number]> {
  const dir = join(root, 'slots/b.next');
  await mkdir(dir, { recursive: true });
  const args = ['-sf'];
  const files: string[] = [];
  for (const [i, layer] of image.built.layers.entries()) {
    files.push(join(dir, `layer-${i}`));
    args.push(
      '-o',
      join(dir, `layer-${i}`),
      `${registry.url}/v2/${repository}/blobs/${layer.descriptor.digest}`,
    );
  }
  // bash's `time` reports curl's own real, user and system time; bash's start-up is not in them.
  const timed = await run('bash', [
    '-c',
    'TIMEFORMAT="%3R %3U %3S"; time curl "$@"',
    'bash',
    ...args,
  ]);
  const [real = Number.NaN, user = Number.NaN, sys = Number.NaN] = timed.stderr
    .trim()
    .split(/\s+/)
    .map(Number);
  const synced = performance.now();
  await run('sync', files);
  return [
    { ms: real * 1000, cpuMs: (user + sys) * 1000 },
    real * 1000 + performance.now() - synced,
  ];
}

const median = (xs: readonly number[]): number =>
  [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;

async function measure(
  registry: RunningRegistry,
  image: InstallerImage,
  tag: string,
  scratch: string,
): Promise<Timing> {
  const t: Timing = { molt: [], curl: [], curlSync: [], moltCpu: [], curlCpu: [] };
  for (let round = 0; round <= rounds; round++) {
    const moltRoot = join(scratch, `molt-${tag}-${round}`);
    const curlRoot = join(scratch, `curl-${tag}-${round}`);
    // Alternate which side goes first, so neither always runs on a warmer machine.
    const first = round % 2 === 0;
    const m1 = first ? await moltPull(registry, tag, moltRoot) : undefined;
    const [c, cs] = await curlPull(registry, image, curlRoot);
    const m = m1 ?? (await moltPull(registry, tag, moltRoot));
    await rm(moltRoot, { recursive: true, force: true });
    await rm(curlRoot, { recursive: true, force: true });
    if (round === 0) continue; // warm-up
    t.molt.push(m.ms);
    t.moltCpu.push(m.cpuMs);
    t.curl.push(c.ms);
    t.curlCpu.push(c.cpuMs);
    t.curlSync.push(cs);
  }
  return t;
}

const ms = (x: number): string => `${Math.round(x)} ms`;
const row = (name: string, xs: readonly number[], bytes: number): string =>
  `${name.padEnd(38)}${ms(median(xs)).padStart(10)}${`${(bytes / MiB / (median(xs) / 1000)).toFixed(0)} MiB/s`.padStart(14)}   ${xs.map((x) => Math.round(x)).join(' ')}`;
const cpuRow = (name: string, xs: readonly number[]): string =>
  `${name.padEnd(38)}${ms(median(xs)).padStart(10)}${''.padStart(14)}   ${xs.map((x) => Math.round(x)).join(' ')}`;

/** Run P5 and print its table and `BENCH P5 …` line. */
export async function runP5(): Promise<void> {
  const registry = await startRegistry();
  const scratch = await tempDir('bench-p5');
  const client = createRegistryClient({ registry: registry.host, insecure: true });
  try {
    const raw = await pushInstallerImage(client, repository, 'raw', {
      version: '1.0.0',
      artifacts: sizes,
    });
    const tar = await pushInstallerImage(client, repository, 'tar', {
      version: '1.0.0',
      artifacts: raw.artifacts,
      format: 'tar',
    });
    const bytes = raw.built.layers.reduce((sum, l) => sum + l.descriptor.size, 0);
    const r = await measure(registry, raw, 'raw', scratch.path);
    const t = await measure(registry, tar, 'tar', scratch.path);
    const ratio = median(r.molt) / median(r.curl);
    const load = (
      await import('node:fs/promises').then((fs) => fs.readFile('/proc/loadavg', 'utf8'))
    )
      .split(' ')
      .slice(0, 3)
      .join(' ');
    const lines = [
      `P5: ${bytes} bytes (${bytes / MiB} MiB) of random artifacts in ${raw.built.layers.length} raw layers, docker-registry 2.8 at ${registry.host}; scratch ${scratch.path}`,
      `cores: ${availableParallelism()}; load average at the end: ${load}; 1 warm-up + ${rounds} alternating rounds, medians`,
      '',
      `${'run'.padEnd(38)}${'median'.padStart(10)}${'throughput'.padStart(14)}   rounds (ms)`,
      row('molt pull, raw layers (hash + fsync)', r.molt, bytes),
      row('curl -sf -o, raw blobs', r.curl, bytes),
      row('curl -sf -o + sync, raw blobs', r.curlSync, bytes),
      row('molt pull, one tar layer', t.molt, bytes),
      row('curl -sf -o + sync, tar blob', t.curlSync, bytes),
      '',
      `${'CPU time (user + system)'.padEnd(38)}${'median'.padStart(10)}${''.padStart(14)}   rounds (ms)`,
      cpuRow('molt pull, raw layers', r.moltCpu),
      cpuRow('curl -sf -o, raw blobs', r.curlCpu),
      cpuRow('molt pull, one tar layer', t.moltCpu),
      '',
      `ratio molt / curl (raw): ${ratio.toFixed(2)} (target ≤ 1.3); molt / (curl + sync): ${(median(r.molt) / median(r.curlSync)).toFixed(2)}; CPU molt / curl: ${(median(r.moltCpu) / median(r.curlCpu)).toFixed(2)}`,
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
    process.stdout.write(
      `BENCH P5 ratio=${ratio.toFixed(2)} molt_ms=${Math.round(median(r.molt))} curl_ms=${Math.round(median(r.curl))} bytes=${bytes}\n`,
    );
  } finally {
    await client.close();
    await registry.stop();
    await scratch.remove();
  }
}
