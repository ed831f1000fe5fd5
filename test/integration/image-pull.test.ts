// SPDX-License-Identifier: Apache-2.0
// The OCI image source and the file-system slot store against the real docker-registry 2.8:
// pull raw and tar installer images into staging, install, verify, resume a half pull, signatures.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createFsSlotStore } from '../../src/agent/adapters/fs-slot-store/index.ts';
import { createOciImageSource } from '../../src/agent/adapters/oci-image-source/index.ts';
import { ErrorCode, isMoltError } from '../../src/core/errors.ts';
import { artifactPath } from '../../src/core/slots/layout.ts';
import { createRegistryClient, type OciRegistryClient } from '../../src/oci/index.ts';
import { attachLegacySignature, generateKeyPair, signLegacy } from '../../src/releases/index.ts';
import { pushInstallerImage } from '../../src/testkit/installer-image.ts';
import { tempDir } from '../../src/platform/process/managed-process.ts';
import { startRegistry, type RunningRegistry } from '../../src/testkit/registry-process.ts';

const repo = 'acme/installer';
const bin = join(import.meta.dirname, '../../src/bin/molt.ts');

function molt(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [bin, ...args], (err, stdout, stderr) => {
      resolve({
        code: err === null ? 0 : typeof err.code === 'number' ? err.code : 1,
        stdout,
        stderr,
      });
    });
  });
}

describe('image pull from docker-registry 2.8', () => {
  let registry: RunningRegistry;
  let client: OciRegistryClient;
  before(async () => {
    registry = await startRegistry();
    client = createRegistryClient({ registry: registry.host, insecure: true });
  });
  after(async () => {
    await client.close();
    await registry.stop();
  });

  for (const format of ['raw', 'tar', 'tar+gzip'] as const) {
    it(`pulls a ${format} installer image into staging, installs and verifies it`, async () => {
      const tag = `1.2.0-${format.replace('+', '-')}`;
      const pushed = await pushInstallerImage(client, repo, tag, {
        version: '1.2.0',
        format,
        artifacts: {
          vmlinuz: 5000,
          'initrd.img': 3000,
          'rootfs.img': 300_000,
          cmdline: new TextEncoder().encode('quiet'),
        },
        labels: { 'dev.molt.lab.health': 'never', 'molt.dev/kubelet-version': 'v1.35.4' },
      });
      const dir = await tempDir('pull');
      try {
        const progress: number[] = [];
        const resolved: unknown[] = [];
        const source = createOciImageSource({ root: dir.path, registry: { insecure: true } });
        const staged = await source.pull(`${registry.host}/${repo}:${tag}`, 'B', {
          onProgress: (p) => progress.push(p.bytes / p.total),
          checkResolved: (image) => {
            resolved.push(image);
          },
        });
        // What the agent's checks before the pull writes see: the release's labels among them.
        assert.deepEqual(resolved, [
          {
            digest: pushed.digest,
            version: '1.2.0',
            labels: {
              'dev.molt.version': '1.2.0',
              'dev.molt.lab.health': 'never',
              'molt.dev/kubelet-version': 'v1.35.4',
            },
          },
        ]);
        assert.deepEqual(staged, {
          imageRef: `${registry.host}/${repo}:${tag}`,
          imageDigest: pushed.digest,
          version: '1.2.0',
        });
        assert.equal(progress.at(-1), 1);
        for (const [name, bytes] of Object.entries(pushed.artifacts))
          assert.deepEqual(
            new Uint8Array(
              await readFile(join(dir.path, artifactPath('B', name as 'vmlinuz', true))),
            ),
            bytes,
            name,
          );
        const store = createFsSlotStore(dir.path);
        assert.deepEqual(await store.staged('B'), staged);
        const m = await store.install('B', 'op-1');
        assert.deepEqual(m.lab, { boot: 'ok', health: 'never' });
        assert.equal(m.kubeletVersion, 'v1.35.4', 'the slot keeps the kubelet its node must run');
        assert.equal(m.imageDigest, pushed.digest);
        assert.equal(
          m.artifacts['rootfs.img']?.layerDigest !== undefined,
          format !== 'raw',
          'tar files record their layer',
        );
        assert.deepEqual(await store.verify('B', 'op-1'), m);
        assert.deepEqual(
          new Uint8Array(await readFile(join(dir.path, 'esp/molt/b/vmlinuz'))),
          pushed.artifacts['vmlinuz'],
        );
      } finally {
        await dir.remove();
      }
    });
  }

  it('resumes a half pull, keeping the artifact files that already hash right', async () => {
    await pushInstallerImage(client, repo, 'resume', {
      artifacts: { vmlinuz: 100_000, 'rootfs.img': 2_000_000 },
    });
    const dir = await tempDir('pull');
    try {
      const source = createOciImageSource({ root: dir.path, registry: { insecure: true } });
      const ref = `${registry.host}/${repo}:resume`;
      await source.pull(ref, 'A');
      // A kill mid-pull: the record is not written yet and the rootfs is cut short.
      await rm(join(dir.path, 'slots/a.next/staged.json'));
      const kernel = join(dir.path, artifactPath('A', 'vmlinuz', true));
      const rootfs = join(dir.path, artifactPath('A', 'rootfs.img', true));
      await writeFile(rootfs, (await readFile(rootfs)).subarray(0, 1000));
      const kernelBefore = await stat(kernel);
      assert.equal(
        await createFsSlotStore(dir.path).staged('A'),
        undefined,
        'a half pull is not staged',
      );
      await source.pull(ref, 'A');
      const kernelAfter = await stat(kernel);
      assert.equal(kernelAfter.ino, kernelBefore.ino);
      assert.equal(
        kernelAfter.mtimeMs,
        kernelBefore.mtimeMs,
        'the good kernel file was not rewritten',
      );
      assert.equal((await stat(rootfs)).size, 2_000_000);
      const store = createFsSlotStore(dir.path);
      await store.install('A', 'op-1');
      await store.verify('A', 'op-1');
    } finally {
      await dir.remove();
    }
  });

  it('pulls only signed images when given a key', async () => {
    const pushed = await pushInstallerImage(client, repo, 'signed');
    await pushInstallerImage(client, repo, 'unsigned', { version: '1.0.1' });
    const keys = generateKeyPair();
    const signature = signLegacy({
      privateKeyPem: keys.privateKeyPem,
      digest: pushed.digest,
      reference: `${registry.host}/${repo}`,
    });
    await attachLegacySignature({ client, repository: repo, digest: pushed.digest, signature });
    const dir = await tempDir('pull');
    try {
      const source = createOciImageSource({
        root: dir.path,
        registry: { insecure: true },
        publicKeyPem: keys.publicKeyPem,
      });
      assert.equal(
        (await source.pull(`${registry.host}/${repo}:signed`, 'B')).imageDigest,
        pushed.digest,
      );
      await assert.rejects(source.pull(`${registry.host}/${repo}:unsigned`, 'A'), (e: unknown) =>
        isMoltError(e, ErrorCode.SignatureMissing),
      );
      const other = createOciImageSource({
        root: dir.path,
        registry: { insecure: true },
        publicKeyPem: generateKeyPair().publicKeyPem,
      });
      await assert.rejects(other.pull(`${registry.host}/${repo}:signed`, 'A'), (e: unknown) =>
        isMoltError(e, ErrorCode.SignatureInvalid),
      );
    } finally {
      await dir.remove();
    }
  });

  it('pulls an installer image published by `molt dev publish --artifact`, and the CLI refuses bad artifacts', async () => {
    const dir = await tempDir('publish');
    try {
      await writeFile(join(dir.path, 'bzImage'), 'a kernel');
      await writeFile(join(dir.path, 'root.img'), 'a root file system');
      const common = [
        'dev',
        'publish',
        '--registry',
        registry.host,
        '--insecure',
        '--repository',
        repo,
      ];
      const ok = await molt([
        ...common,
        '--tag',
        'cli-1.4.0',
        '--version',
        '1.4.0',
        '--artifact',
        `vmlinuz=${join(dir.path, 'bzImage')}`,
        '--artifact',
        `rootfs.img=${join(dir.path, 'root.img')}`,
        '--label',
        'dev.molt.lab.boot=fail',
      ]);
      assert.equal(ok.code, 0, ok.stderr);
      const root = join(dir.path, 'machine');
      const staged = await createOciImageSource({ root, registry: { insecure: true } }).pull(
        `${registry.host}/${repo}:cli-1.4.0`,
        'A',
      );
      assert.equal(staged.version, '1.4.0');
      const m = await createFsSlotStore(root).install('A', 'op-1');
      assert.deepEqual(m.lab, { boot: 'fail', health: 'ok' });
      assert.equal(await readFile(join(root, 'esp/molt/a/vmlinuz'), 'utf8'), 'a kernel');
      for (const bad of [
        ['--artifact', `evil=${join(dir.path, 'bzImage')}`],
        ['--artifact', 'vmlinuz=/no/such/file'],
        ['--artifact', 'vmlinuz'],
        [
          '--artifact',
          `vmlinuz=${join(dir.path, 'bzImage')}`,
          '--artifact',
          `vmlinuz=${join(dir.path, 'bzImage')}`,
        ],
      ]) {
        const r = await molt([...common, '--tag', 'cli-bad', '--version', '1.4.1', ...bad]);
        assert.equal(r.code, 1);
        assert.match(r.stderr, /^error MOLT_BAD_FLAG: --artifact/m, r.stderr);
        assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace');
      }
      const noVersion = await molt([
        ...common,
        '--tag',
        'cli-bad',
        '--artifact',
        `vmlinuz=${join(dir.path, 'bzImage')}`,
      ]);
      assert.match(
        noVersion.stderr,
        /^error MOLT_BAD_FLAG: --version is required with --artifact/m,
      );
      assert.equal(await client.headManifest(repo, 'cli-bad'), undefined, 'nothing was published');
    } finally {
      await dir.remove();
    }
  });
});
