// SPDX-License-Identifier: Apache-2.0
// `molt image build --operator` for real: mmdebstrap extracts the Debian packages, the checkout is
// packed, the image is written as an OCI layout and pushed to the Debian docker-registry with
// molt's own client, skopeo (not molt) reads both and pulls the image back, GNU tar unpacks what
// skopeo pulled, and Node and molt run from it as the image's user (chroot, 65532). A second
// build of the same inputs comes from the cache with the same digest.
//
// Measured on 2 cores: the whole file 45 s with an empty build cache (the first build 30 s:
// mmdebstrap, npm ci, gzip of Node; the second 3 s), up to 75 s while other suites load the
// machine; most of the rest is npm pack's `npm run build`. The cache is the checkout's
// (.molt/images, or $MOLT_IMAGE_CACHE), shared with `molt image build`.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { moltTarball } from '../../src/image/build/molt-package.ts';
import { DefaultConfigPath, OperatorEntrypoint } from '../../src/image/operator/image.ts';
import type { OperatorImageSummary } from '../../src/image/operator/build.ts';
import { createRegistryClient, MediaType, type OciRegistryClient } from '../../src/oci/index.ts';
import { tempDir } from '../../src/platform/process/managed-process.ts';
import { moltArgv } from '../../src/testkit/molt-entry.ts';
import { startRegistry, type TestRegistry } from '../../src/testkit/registry-process.ts';

const run = promisify(execFile);
const repoRoot = join(import.meta.dirname, '../..');
const needsRoot = process.getuid?.() === 0 ? false : 'needs root (mmdebstrap, chroot)';
const { version } = JSON.parse(await readFile(join(repoRoot, 'package.json'), 'utf8')) as {
  version: string;
};

interface Config {
  architecture: string;
  os: string;
  config: {
    Entrypoint: string[];
    Cmd: string[];
    Env: string[];
    User: string;
    WorkingDir: string;
    Labels: Record<string, string>;
  };
}
interface Manifest {
  mediaType: string;
  config: { digest: string };
  layers: { mediaType: string; digest: string }[];
}

/** `molt image build …` as a user runs it; resolves with stdout, stderr and milliseconds. */
async function molt(...args: string[]): Promise<{ stdout: string; stderr: string; ms: number }> {
  const t = performance.now();
  const [node, entry] = moltArgv;
  const r = await run(node!, [entry!, 'image', 'build', ...args], {
    cwd: repoRoot,
    maxBuffer: 16 << 20,
  });
  return { ...r, ms: Math.round(performance.now() - t) };
}

describe('molt image build --operator', { skip: needsRoot }, () => {
  let registry: TestRegistry;
  let client: OciRegistryClient;
  let scratch: { path: string; remove: () => Promise<void> };
  let tgz: string;
  let first: OperatorImageSummary;
  let ref: string;

  before(async () => {
    registry = await startRegistry();
    client = createRegistryClient({ registry: registry.host, insecure: true });
    scratch = await tempDir('operator-image');
    // One pack of the checkout for both builds, so the second has the same inputs as the first.
    tgz = (await moltTarball(undefined, scratch.path, {})).tgz;
    ref = `${registry.host}/molt/operator:test`;
    const built = await molt(
      '--operator',
      '--molt-package',
      tgz,
      '--out',
      join(scratch.path, 'layout'),
      '--push',
      ref,
      '--insecure',
      '--json',
    );
    first = JSON.parse(built.stdout) as OperatorImageSummary;
    console.log(
      `# first build: ${String(built.ms)} ms (base ${first.cached.base ? 'cached' : 'built'})`,
    );
  });
  after(async () => {
    await client.close();
    await registry.stop();
    await scratch.remove();
  });

  it('is in molt image build --help', async () => {
    const { stdout } = await molt('--help');
    assert.match(stdout, /molt image build --operator \(--out DIR \| --push REF\)/);
  });

  it('refuses an --out that holds something else, before building anything', async () => {
    const busy = join(scratch.path, 'busy');
    await mkdir(join(busy, 'keep'), { recursive: true });
    await assert.rejects(
      molt('--operator', '--out', busy, '--molt-package', tgz),
      (e: { code?: number; stderr?: string }) =>
        e.code !== 0 &&
        /MOLT_BAD_FLAG/.test(e.stderr ?? '') &&
        /holds no OCI image layout/.test(e.stderr ?? ''),
    );
    assert.ok((await stat(join(busy, 'keep'))).isDirectory());
  });

  it('pushes a linux/amd64 OCI image that runs `molt operator` as 65532, labelled with molt’s version', async () => {
    const m = await client.getManifest('molt/operator', 'test');
    assert.equal(m.digest, first.digest);
    assert.equal(m.mediaType, MediaType.OciManifest);
    const manifest = m.json as Manifest;
    assert.equal(manifest.layers.length, 3);
    assert.deepEqual(
      manifest.layers.map((l) => l.digest),
      first.layers.map((l) => l.digest),
    );
    const config = JSON.parse(
      Buffer.from(await client.getBlob('molt/operator', manifest.config.digest)).toString(),
    ) as Config;
    assert.equal(config.architecture, 'amd64');
    assert.equal(config.os, 'linux');
    assert.deepEqual(config.config.Entrypoint, OperatorEntrypoint);
    assert.deepEqual(config.config.Cmd, ['--config', DefaultConfigPath]);
    assert.equal(config.config.User, '65532:65532');
    assert.ok(config.config.Env.includes('NODE_ENV=production'));
    assert.equal(config.config.Labels['org.opencontainers.image.version'], version);
  });

  it('is read the same by skopeo from the registry and from the layout', async () => {
    const remote = JSON.parse(
      (await run('skopeo', ['inspect', '--tls-verify=false', `docker://${ref}`])).stdout,
    ) as { Digest: string; Architecture: string; Os: string; Labels: Record<string, string> };
    assert.equal(remote.Digest, first.digest);
    assert.equal(remote.Architecture, 'amd64');
    assert.equal(remote.Os, 'linux');
    assert.equal(remote.Labels['org.opencontainers.image.title'], 'molt-operator');
    const local = JSON.parse(
      (await run('skopeo', ['inspect', `oci:${join(scratch.path, 'layout')}:test`])).stdout,
    ) as { Digest: string };
    assert.equal(local.Digest, first.digest);
  });

  it('runs Node 24 and molt from what skopeo pulls, as nonroot, with CA certificates', async () => {
    const pulled = join(scratch.path, 'pulled');
    await run('skopeo', ['copy', '--src-tls-verify=false', `docker://${ref}`, `oci:${pulled}:x`]);
    const index = JSON.parse(await readFile(join(pulled, 'index.json'), 'utf8')) as {
      manifests: { digest: string }[];
    };
    const blob = (digest: string): string => join(pulled, 'blobs', 'sha256', digest.slice(7));
    assert.equal(index.manifests[0]?.digest, first.digest);
    const manifest = JSON.parse(await readFile(blob(first.digest), 'utf8')) as Manifest;
    const root = join(scratch.path, 'root');
    await mkdir(root);
    for (const l of manifest.layers)
      await run('tar', [
        '-xzf',
        blob(l.digest),
        '-C',
        root,
        '--numeric-owner',
        '--same-permissions',
      ]);
    const home = await stat(join(root, 'home', 'nonroot'));
    assert.equal(home.uid, 65532);
    assert.equal((await stat(join(root, 'tmp'))).mode & 0o7777, 0o1777);
    const as = async (...argv: string[]): Promise<string> =>
      // By path: PATH below is the image's, and chroot must be found before it applies.
      (
        await run('/usr/sbin/chroot', ['--userspec=65532:65532', root, ...argv], {
          env: {
            PATH: '/usr/local/bin:/usr/bin:/bin',
            NODE_ENV: 'production',
            HOME: '/home/nonroot',
          },
        })
      ).stdout;
    assert.match(await as('/usr/local/bin/node', '--version'), /^v24\./);
    assert.match(
      await as('/usr/local/bin/molt', '--version'),
      new RegExp(`^molt ${version.replaceAll('.', '\\.')} `),
    );
    assert.match(await as(...OperatorEntrypoint, '--help'), /^Usage: molt operator --config FILE/);
    // The bundle update-ca-certificates would have written: every Mozilla root.
    const certs = await as(
      '/usr/local/bin/node',
      '-e',
      'const t=require("fs").readFileSync("/etc/ssl/certs/ca-certificates.crt","utf8");console.log(t.split("BEGIN CERTIFICATE").length-1)',
    );
    assert.ok(Number(certs) > 100, `${certs.trim()} certificates in the bundle`);
    assert.equal(await as('/usr/local/bin/node', '-e', 'console.log(process.getuid())'), '65532\n');
  });

  it('builds the same image again from the cache', async () => {
    const again = await molt(
      '--operator',
      '--molt-package',
      tgz,
      '--push',
      ref,
      '--insecure',
      '--json',
    );
    const second = JSON.parse(again.stdout) as OperatorImageSummary;
    console.log(`# second build: ${String(again.ms)} ms`);
    assert.equal(second.digest, first.digest);
    assert.deepEqual(second.cached, { base: true, molt: true });
    assert.ok(second.layers.every((l) => l.cached));
  });
});
