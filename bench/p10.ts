// SPDX-License-Identifier: Apache-2.0
/**
 * Benchmark P10 (was P9 until the VM upgrade took that ID): a gzip bomb against the agent's pull. One tar+gzip installer
 * layer holding a small valid tar archive followed by 4 GiB of zeros (64 MiB gzip members, ~4 MB
 * on the wire, with a correct descriptor and digest), in the real docker-registry on loopback.
 * The agent's PullImage path (`createOciImageSource().pull`) runs in this process with the default
 * image cap (2 GiB); the table shows how long the refusal took, its code, and the peak RSS of the
 * process (`resourceUsage().maxRSS`) against the RSS before the pull.
 */
import { gzipSync } from 'node:zlib';
import { createOciImageSource } from '../src/agent/adapters/oci-image-source/index.ts';
import { isMoltError } from '../src/core/errors.ts';
import { createRegistryClient, MediaType } from '../src/oci/index.ts';
import { tempDir } from '../src/platform/process/managed-process.ts';
import { startRegistry } from '../src/lab/services/registry.ts';
import { buildInstallerImage, tarArchive } from '../src/testkit/installer-image.ts';

const MiB = 1024 * 1024;

function bomb(zeros: number): Uint8Array {
  const member = gzipSync(Buffer.alloc(64 * MiB), { level: 9 });
  const parts = [
    gzipSync(
      tarArchive([
        { name: 'vmlinuz', body: new Uint8Array(4096).fill(1) },
        { name: 'rootfs.img', body: new Uint8Array(8192).fill(2) },
      ]),
    ),
  ];
  for (let left = zeros; left > 0; left -= 64 * MiB) parts.push(member);
  return new Uint8Array(Buffer.concat(parts));
}

export async function runP10(): Promise<void> {
  const [registry, root] = await Promise.all([startRegistry(), tempDir('p10')]);
  const client = createRegistryClient({ registry: registry.host, insecure: true });
  try {
    const bytes = bomb(4096 * MiB);
    // Built around a small stand-in (building a gzip layer hashes its inflated bytes for the
    // config's diff_ids, which molt never reads), then the bomb's descriptor is swapped in.
    const { built } = buildInstallerImage({
      artifacts: {},
      extraLayers: [{ mediaType: MediaType.OciLayerGzip, bytes: bomb(0) }],
    });
    await client.pushBlob('bench/bomb', built.config.bytes, built.config.descriptor.mediaType);
    const layer = await client.pushBlob('bench/bomb', bytes, MediaType.OciLayerGzip);
    const manifest = JSON.parse(new TextDecoder().decode(built.manifest.bytes)) as {
      layers: object[];
    };
    manifest.layers = [layer];
    await client.pushManifest(
      'bench/bomb',
      'bomb',
      new TextEncoder().encode(JSON.stringify(manifest)),
      built.manifest.descriptor.mediaType,
    );
    const source = createOciImageSource({ root: root.path, registry: { insecure: true } });
    const rssBefore = process.memoryUsage().rss;
    const started = performance.now();
    let code = 'none (pulled)';
    try {
      await source.pull(`${registry.host}/bench/bomb:bomb`, 'B');
    } catch (e) {
      code = isMoltError(e) ? e.code : String(e);
    }
    const seconds = (performance.now() - started) / 1000;
    const peakMb = (process.resourceUsage().maxRSS * 1024) / MiB;
    const rssMb = rssBefore / MiB;
    process.stdout.write(
      `gzip bomb: ${bytes.byteLength} bytes on the wire, 4 GiB of zeros inflated\n` +
        `refused with ${code} after ${seconds.toFixed(1)} s; RSS before ${rssMb.toFixed(0)} MB, peak ${peakMb.toFixed(0)} MB\n` +
        `BENCH P10 seconds=${seconds.toFixed(1)} code=${code} rss_before_mb=${rssMb.toFixed(0)} peak_rss_mb=${peakMb.toFixed(0)}\n`,
    );
  } finally {
    await client.close();
    await Promise.all([registry.stop(), root.remove()]);
  }
}
