// SPDX-License-Identifier: Apache-2.0
// The lab's container images (src/lab/services/container-images.ts) pushed into the real Debian
// docker-registry: what a container runtime reads of them (manifest, config, layers), read back by
// skopeo, and the entrypoints really run as PID 1 of a PID namespace.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { gunzipSync } from 'node:zlib';
import { busyboxPaths } from '../../../src/lab/services/busybox.ts';
import {
  pageOf,
  pushContainerImages,
  type ContainerImages,
  type PushedImage,
} from '../../../src/lab/services/container-images.ts';
import { createRegistryClient, MediaType, sha256Digest } from '../../../src/oci/index.ts';
import type { OciRegistryClient } from '../../../src/oci/index.ts';
import { freePort } from '../../../src/platform/process/free-port.ts';
import { eventually, tempDir } from '../../../src/platform/process/managed-process.ts';
import { startRegistry, type RunningRegistry } from '../../../src/testkit/registry-process.ts';
import { exitsWithin, startPid1, unpackRoot } from './pid1-container.ts';

const run = promisify(execFile);
const root = process.getuid?.() === 0;
const needsRoot = root ? false : 'needs root (unshare --pid, mknod)';

interface Config {
  created: string;
  architecture: string;
  os: string;
  config: { Env?: string[]; Entrypoint?: string[]; Cmd?: string[]; Labels: Record<string, string> };
  rootfs: { type: string; diff_ids: string[] };
  history: unknown[];
}
interface Manifest {
  mediaType: string;
  config: { mediaType: string; digest: string };
  layers: { mediaType: string; digest: string }[];
}

describe('the lab container images in the real registry', () => {
  let registry: RunningRegistry;
  let client: OciRegistryClient;
  let scratch: { path: string; remove: () => Promise<void> };
  let images: ContainerImages;

  const manifestOf = async (i: PushedImage): Promise<Manifest> =>
    (await client.getManifest(i.repository, i.tag)).json as Manifest;
  const configOf = async (i: PushedImage): Promise<Config> => {
    const m = await manifestOf(i);
    return JSON.parse(
      Buffer.from(await client.getBlob(i.repository, m.config.digest)).toString(),
    ) as Config;
  };
  const layersOf = async (i: PushedImage): Promise<Uint8Array[]> => {
    const m = await manifestOf(i);
    return Promise.all(m.layers.map((l) => client.getBlob(i.repository, l.digest, 64 << 20)));
  };
  const unpacked = async (i: PushedImage, name: string): Promise<string> => {
    const dir = join(scratch.path, name);
    await unpackRoot(dir, await layersOf(i));
    return dir;
  };

  before(async () => {
    registry = await startRegistry();
    client = createRegistryClient({ registry: registry.host, insecure: true });
    scratch = await tempDir('container-images');
    images = await pushContainerImages({ registry: registry.host, insecure: true });
  });
  after(async () => {
    await client.close();
    await registry.stop();
    await scratch.remove();
  });

  it('pushes linux/amd64 OCI image manifests whose diff_ids hash the unpacked layers', async () => {
    for (const i of [images.pause, images.busybox, images.busyboxNext]) {
      const fetched = await client.getManifest(i.repository, i.tag);
      assert.equal(fetched.digest, i.digest);
      assert.equal(fetched.mediaType, MediaType.OciManifest);
      assert.equal(i.byDigest, `${registry.host}/${i.repository}@${i.digest}`);
      const m = fetched.json as Manifest;
      assert.equal(m.mediaType, MediaType.OciManifest);
      assert.equal(m.config.mediaType, MediaType.OciConfig);
      assert.ok(m.layers.every((l) => l.mediaType === MediaType.OciLayerGzip));
      const config = await configOf(i);
      assert.equal(config.architecture, 'amd64');
      assert.equal(config.os, 'linux');
      assert.equal(config.created, '2026-01-01T00:00:00Z');
      assert.equal(config.rootfs.type, 'layers');
      const layers = await layersOf(i);
      assert.deepEqual(
        config.rootfs.diff_ids,
        layers.map((l) => sha256Digest(gunzipSync(l))),
      );
      assert.equal(config.history.length, layers.length);
    }
    const pause = (await configOf(images.pause)).config;
    assert.deepEqual(pause.Entrypoint?.slice(0, 2), ['/bin/sh', '-c']);
    assert.equal(pause.Cmd, undefined);
    const busybox = (await configOf(images.busybox)).config;
    assert.deepEqual(busybox.Cmd?.slice(0, 2), ['/bin/sh', '-c']);
    assert.ok(busybox.Env?.includes('HTTP_PORT=8080'));
  });

  it('tags busybox 1 and 2 as two digests over the same busybox layer', async () => {
    assert.equal(images.busybox.repository, 'molt/busybox');
    assert.equal(images.pause.byTag, `${registry.host}/molt/pause:3.10`);
    assert.notEqual(images.busybox.digest, images.busyboxNext.digest);
    const [one, two] = [await manifestOf(images.busybox), await manifestOf(images.busyboxNext)];
    assert.equal(one.layers[0]?.digest, two.layers[0]?.digest);
    assert.equal(one.layers[0]?.digest, (await manifestOf(images.pause)).layers[0]?.digest);
    assert.notEqual(one.layers[1]?.digest, two.layers[1]?.digest);
    assert.equal(
      (await configOf(images.busyboxNext)).config.Labels['org.opencontainers.image.version'],
      '2',
    );
  });

  it('lays the host static busybox at bin/busybox, 0755 root, with its applets linked', async () => {
    const [base] = await layersOf(images.busybox);
    assert.ok(base !== undefined);
    const file = join(scratch.path, 'base.tar.gz');
    await writeFile(file, base);
    const { stdout } = await run('tar', ['-tvzf', file, '--numeric-owner']);
    const line = (path: string): string | undefined =>
      stdout.split('\n').find((l) => l.endsWith(` ${path}`) || l.includes(` ${path} -> `));
    assert.match(line('bin/busybox') ?? '', /^-rwxr-xr-x 0\/0 /);
    assert.match(line('bin/sh') ?? '', /^lrwxrwxrwx 0\/0 .* bin\/sh -> busybox$/);
    assert.match(line('bin/httpd') ?? '', / bin\/httpd -> busybox$/);
    const dir = await unpacked(images.busybox, 'inspect');
    const host = await readFile(busyboxPaths[0] ?? '/bin/busybox');
    assert.ok(Buffer.from(await readFile(join(dir, 'bin', 'busybox'))).equals(host));
    assert.equal(await readFile(join(dir, 'www', 'index.html'), 'utf8'), pageOf('1'));
  });

  it('pushes the same digests again', async () => {
    assert.deepEqual(
      await pushContainerImages({ registry: registry.host, insecure: true }),
      images,
    );
  });

  it('is read by skopeo', async () => {
    for (const i of [images.pause, images.busybox]) {
      const { stdout } = await run('skopeo', [
        'inspect',
        '--tls-verify=false',
        `docker://${i.byTag}`,
      ]);
      const seen = JSON.parse(stdout) as {
        Digest: string;
        Architecture: string;
        Os: string;
        Labels: Record<string, string>;
      };
      assert.equal(seen.Digest, i.digest);
      assert.equal(seen.Architecture, 'amd64');
      assert.equal(seen.Os, 'linux');
      assert.equal(seen.Labels['org.opencontainers.image.version'], i.tag);
    }
  });

  it('runs pause as PID 1, which exits 0 within 2 s of SIGTERM', { skip: needsRoot }, async () => {
    const dir = await unpacked(images.pause, 'pause');
    const c = (await configOf(images.pause)).config;
    const p = await startPid1(dir, [...(c.Entrypoint ?? []), ...(c.Cmd ?? [])], c.Env ?? []);
    try {
      // Steady state: the shell waits on its sleep.
      await eventually(
        async () => {
          assert.equal((await p.children()).length, 1);
        },
        { intervalMs: 20 },
      );
      process.kill(p.pid, 'SIGTERM');
      const ms = await exitsWithin(p, 2_000);
      assert.ok(ms !== undefined, `pause ignored SIGTERM: ${p.proc.output()}`);
      assert.equal(await p.proc.exited, 0);
      assert.equal(p.proc.output(), '');
    } finally {
      await p.kill();
    }
  });

  it(
    'a bare sleep as PID 1 ignores SIGTERM (why pause traps it)',
    { skip: needsRoot },
    async () => {
      const dir = await unpacked(images.pause, 'bare-sleep');
      const p = await startPid1(dir, ['/bin/sleep', '3600'], ['PATH=/bin']);
      try {
        process.kill(p.pid, 'SIGTERM');
        assert.equal(await exitsWithin(p, 1_000), undefined);
      } finally {
        await p.kill();
      }
    },
  );

  it(
    'serves its page with busybox httpd and exits within 2 s of SIGTERM',
    { skip: needsRoot },
    async () => {
      const dir = await unpacked(images.busyboxNext, 'busybox');
      const c = (await configOf(images.busyboxNext)).config;
      const port = await freePort();
      const env = [
        ...(c.Env ?? []).filter((e) => !e.startsWith('HTTP_PORT=')),
        `HTTP_PORT=${String(port)}`,
      ];
      const p = await startPid1(dir, [...(c.Entrypoint ?? []), ...(c.Cmd ?? [])], env);
      try {
        const body = await eventually(
          async () => (await fetch(`http://127.0.0.1:${String(port)}/`)).text(),
          { intervalMs: 50 },
        );
        assert.equal(body, pageOf('2'));
        process.kill(p.pid, 'SIGTERM');
        assert.ok(
          (await exitsWithin(p, 2_000)) !== undefined,
          `httpd image ignored SIGTERM: ${p.proc.output()}`,
        );
        assert.equal(await p.proc.exited, 0);
      } finally {
        await p.kill();
      }
    },
  );
});
