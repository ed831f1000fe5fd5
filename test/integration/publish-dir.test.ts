// SPDX-License-Identifier: Apache-2.0
// `molt dev publish --dir DIR` pushes what `molt image build --out DIR` wrote (docs/image.md):
// every installer artifact as a raw layer, the version and the node runtime's labels from
// image.json, signed; the agent's image source pulls it back byte for byte. A directory without a kernel publishes nothing.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createOciImageSource } from '../../src/agent/adapters/oci-image-source/index.ts';
import { artifactPath } from '../../src/core/slots/layout.ts';
import { createRegistryClient, type OciRegistryClient } from '../../src/oci/index.ts';
import { generateKeyPair } from '../../src/releases/index.ts';
import { tempDir } from '../../src/platform/process/managed-process.ts';
import { startRegistry, type RunningRegistry } from '../../src/testkit/registry-process.ts';

const repo = 'acme/os';
const bin = join(import.meta.dirname, '../../src/bin/molt.ts');

function molt(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [bin, ...args], (err, stdout, stderr) => {
      resolve({ code: err === null ? 0 : Number(err.code ?? 1), stdout, stderr });
    });
  });
}

describe('molt dev publish --dir', () => {
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

  it('publishes an image build output, signed, with the version of its image.json', async () => {
    const dir = await tempDir('publish-dir');
    try {
      const out = join(dir.path, 'out');
      await mkdir(out);
      const files = {
        vmlinuz: 'a kernel',
        'initrd.img': 'an initramfs',
        'rootfs.img': 'a squashfs',
        cmdline: 'console=ttyS0 ro quiet\n',
      };
      for (const [name, text] of Object.entries(files)) await writeFile(join(out, name), text);
      const kubernetesNode = { kubelet: 'v1.35.4', containerd: 'v2.4.2', crictl: 'v1.37.0' };
      await writeFile(
        join(out, 'image.json'),
        JSON.stringify({ version: '1.1.0', cached: false, kubernetesNode }),
      );
      const keys = generateKeyPair();
      await writeFile(join(dir.path, 'key.pem'), keys.privateKeyPem);
      await writeFile(join(dir.path, 'pub.pem'), keys.publicKeyPem);
      const common = ['dev', 'publish', '--registry', registry.host, '--insecure'];
      const ok = await molt([
        ...[...common, '--repository', repo, '--tag', '1.1.0', '--dir', out],
        ...['--sign-key', join(dir.path, 'key.pem')],
      ]);
      assert.equal(ok.code, 0, ok.stderr);
      assert.match(ok.stdout, /published 1\.1\.0 → sha256:[0-9a-f]{64} \(signed: /);
      const image = await client.resolveImage(repo, '1.1.0', {
        os: 'linux',
        architecture: 'amd64',
      });
      const config = JSON.parse(
        new TextDecoder().decode(await client.getBlob(repo, image.config.digest)),
      ) as { config: { Labels: Record<string, string> } };
      assert.equal(config.config.Labels['molt.dev/kubelet-version'], 'v1.35.4');
      assert.equal(config.config.Labels['molt.dev/containerd-version'], 'v2.4.2');
      const root = join(dir.path, 'machine');
      const staged = await createOciImageSource({
        root,
        registry: { insecure: true },
        publicKeyPem: keys.publicKeyPem,
      }).pull(`${registry.host}/${repo}:1.1.0`, 'B');
      assert.equal(staged.version, '1.1.0');
      for (const [name, text] of Object.entries(files))
        assert.equal(
          await readFile(join(root, artifactPath('B', name as 'vmlinuz', true)), 'utf8'),
          text,
          name,
        );

      const empty = join(dir.path, 'empty');
      await mkdir(empty);
      const bad = await molt([...common, '--repository', repo, '--tag', 'bad', '--dir', empty]);
      assert.equal(bad.code, 1);
      assert.match(bad.stderr, /^error MOLT_BAD_FLAG: --dir .* has no vmlinuz and rootfs\.img/m);
      assert.equal(await client.headManifest(repo, 'bad'), undefined, 'nothing was published');
    } finally {
      await dir.remove();
    }
  });
});
