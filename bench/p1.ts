// SPDX-License-Identifier: Apache-2.0
/**
 * Benchmark P1: discovery over 2,000 tags / 500 digests in the real registry (Debian
 * docker-registry 2.8.2 on loopback). Compares, in one run:
 * - molt cold: a new client and an empty cache file → discover + select latest;
 * - molt warm: a new client and the cache file the cold run saved (a new process, in effect);
 * - the skopeo loop: `skopeo list-tags` once, then `skopeo inspect --config` for every tag, one
 *   after another — the per-tag loop the issue names, as a shell `for` over the tags would run.
 * Target: cold ≥ 20× faster than the skopeo loop; the warm scan makes no manifest or blob GETs.
 */
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { selectLatest } from '../src/core/releases/index.ts';
import { ReleaseLabel } from '../src/core/releases/release.ts';
import { buildImage, createRegistryClient, MediaType, pushImage } from '../src/oci/index.ts';
import type { RequestStats } from '../src/oci/types.ts';
import { mapConcurrent } from '../src/releases/discovery/pool.ts';
import { discoverReleases, FileReleaseCache } from '../src/releases/index.ts';
import { tempDir } from '../src/platform/process/managed-process.ts';
import { startRegistry, type RunningRegistry } from '../src/lab/services/registry.ts';

const run = promisify(execFile);
const repository = 'bench/installer';
const images = 500;
const seedConcurrency = 16;
const skopeoConcurrency = 1;

/** The four tags of image `i`: short, intermediate, long (3-tier) and a `v`-prefixed semver-ish alias. */
function tagsOf(i: number): string[] {
  const app = `2.${Math.floor(i / 25)}.${i % 25}`;
  return [app, `${app}-rev1`, `${app}-rev1-b${1000 + i}`, `v${app}-rev1`];
}

async function seed(registry: RunningRegistry): Promise<number> {
  const client = createRegistryClient({
    registry: registry.host,
    insecure: true,
    concurrency: seedConcurrency,
  });
  const layer = {
    mediaType: MediaType.OciLayer,
    bytes: new TextEncoder().encode('installer payload'),
  };
  const started = performance.now();
  // The layer is shared: upload it once up front. Concurrent uploads of one blob race in registry
  // 2.8.2 and a manifest PUT can then fail with MANIFEST_BLOB_UNKNOWN.
  await client.pushBlob(repository, layer.bytes, layer.mediaType);
  await mapConcurrent([...Array(images).keys()], seedConcurrency, async (i) => {
    const [app = ''] = tagsOf(i);
    const labels = {
      [ReleaseLabel.Version]: app,
      [ReleaseLabel.Channels]: 'stable',
      [ReleaseLabel.Official]: 'true',
    };
    await pushImage(
      client,
      repository,
      tagsOf(i),
      buildImage({ labels, layers: [layer], created: '2026-01-01T00:00:00Z' }),
    );
  });
  await client.close();
  return performance.now() - started;
}

interface MoltRun {
  readonly ms: number;
  /** CPU time of this Node process and of the registry process during the run. */
  readonly nodeCpuMs: number;
  readonly registryCpuMs: number;
  readonly latest: string;
  readonly releases: number;
  readonly requests: RequestStats;
}

/** `releases latest` in-process: a new client (new connections, zeroed counters) and a cache file. */
async function molt(registry: RunningRegistry, cachePath: string): Promise<MoltRun> {
  const cpu = process.cpuUsage();
  const registryCpu = await processCpuMs(registry.process.pid);
  const started = performance.now();
  const reader = createRegistryClient({ registry: registry.host, insecure: true });
  const result = await discoverReleases({
    reader,
    repository,
    registry: registry.host,
    cache: new FileReleaseCache(cachePath),
  });
  const selection = selectLatest({ releases: result.releases, channel: 'stable' });
  const ms = performance.now() - started;
  const used = process.cpuUsage(cpu);
  const registryCpuMs = (await processCpuMs(registry.process.pid)) - registryCpu;
  await reader.close();
  const latest = selection.found ? selection.release.tag : 'none';
  const nodeCpuMs = (used.user + used.system) / 1000;
  return {
    ms,
    nodeCpuMs,
    registryCpuMs,
    latest,
    releases: result.releases.length,
    requests: result.requests,
  };
}

/** User + system CPU of a process from /proc (clock ticks of 10 ms on Linux). */
async function processCpuMs(pid: number): Promise<number> {
  const fields = (await readFile(`/proc/${pid}/stat`, 'utf8')).split(') ')[1]?.split(' ') ?? [];
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

async function skopeo(registry: RunningRegistry): Promise<{ ms: number; tags: number }> {
  const ref = `docker://${registry.host}/${repository}`;
  const started = performance.now();
  const listed = JSON.parse(
    (await run('skopeo', ['list-tags', '--tls-verify=false', ref])).stdout,
  ) as { Tags: string[] };
  await mapConcurrent(listed.Tags, skopeoConcurrency, async (tag) => {
    const out = await run(
      'skopeo',
      ['inspect', '--tls-verify=false', '--config', `${ref}:${tag}`],
      { maxBuffer: 1 << 20 },
    );
    // The loop has to parse what it reads, as a script comparing versions would.
    JSON.parse(out.stdout);
  });
  return { ms: performance.now() - started, tags: listed.Tags.length };
}

const fmt = (ms: number): string => `${Math.round(ms)} ms`;
const gets = (s: RequestStats): string =>
  `list ${s.tagList}, HEAD ${s.manifestHead}, manifest GET ${s.manifestGet}, blob GET ${s.blobGet}`;
const cpu = (r: MoltRun): string =>
  `CPU: molt ${fmt(r.nodeCpuMs)}, registry ${fmt(r.registryCpuMs)}`;

/** Run P1 and print its table and `BENCH P1 …` line. */
export async function runP1(): Promise<void> {
  const registry = await startRegistry();
  const dir = await tempDir('bench-p1');
  try {
    const seedMs = await seed(registry);
    const cachePath = join(dir.path, 'releases.json');
    const cold = await molt(registry, cachePath);
    const warm = await molt(registry, cachePath);
    const loop = await skopeo(registry);
    const ratio = loop.ms / cold.ms;
    const load = (await readFile('/proc/loadavg', 'utf8')).split(' ').slice(0, 3).join(' ');
    const lines = [
      `P1: ${images} digests × 4 tags = ${loop.tags} tags in docker-registry 2.8.2 at ${registry.host} (seeded in ${fmt(seedMs)}, ${seedConcurrency} concurrent pushes)`,
      `cores: ${availableParallelism()}; load average at the end: ${load}; skopeo loop concurrency: ${skopeoConcurrency}; molt request concurrency: 16`,
      '',
      `${'run'.padEnd(44)}${'time'.padStart(10)}  requests / result`,
      `${'molt cold (empty cache): list + latest'.padEnd(44)}${fmt(cold.ms).padStart(10)}  ${gets(cold.requests)}; ${cold.releases} releases, latest ${cold.latest}`,
      `${'molt warm (cache file reloaded, new client)'.padEnd(44)}${fmt(warm.ms).padStart(10)}  ${gets(warm.requests)}; latest ${warm.latest}`,
      `${''.padEnd(54)}cold ${cpu(cold)}; warm ${cpu(warm)}`,
      `${`skopeo list-tags + ${loop.tags} × inspect --config`.padEnd(44)}${fmt(loop.ms).padStart(10)}  ${loop.tags + 1} skopeo processes, ${skopeoConcurrency} at a time`,
      '',
      `ratio skopeo / molt cold: ${ratio.toFixed(1)}× (target ≥ 20×); warm blob GETs: ${warm.requests.blobGet}, manifest GETs: ${warm.requests.manifestGet} (target 0)`,
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
    process.stdout.write(
      `BENCH P1 ratio=${ratio.toFixed(1)} molt_cold_ms=${Math.round(cold.ms)} molt_warm_ms=${Math.round(warm.ms)} ` +
        `skopeo_ms=${Math.round(loop.ms)} warm_blob_gets=${warm.requests.blobGet}\n`,
    );
  } finally {
    await registry.stop();
    await dir.remove();
  }
}
