// SPDX-License-Identifier: Apache-2.0
// Registry mirrors (machine config `registry.mirrors`) against the real docker-registry 2.8: a
// release published under a registry name that does not resolve (`.invalid`, RFC 6761) is pulled
// through a mirror entry mapping that name to the real registry's loopback address — as a VM
// pulls `127.0.0.1:5000/…` from its host at 10.0.2.2:5000. Without the entry the pull cannot
// connect at all, so a passing pull proves the mirror was used; the recorded reference, the
// signature (signed for the published name) and token auth are the published ones.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createOciImageSource } from '../../src/agent/adapters/oci-image-source/index.ts';
import { ErrorCode, isMoltError } from '../../src/core/errors.ts';
import { createRegistryClient, type Credentials } from '../../src/oci/index.ts';
import { tempDir } from '../../src/platform/process/managed-process.ts';
import { attachLegacySignature, generateKeyPair, signLegacy } from '../../src/releases/index.ts';
import { pushInstallerImage } from '../../src/testkit/installer-image.ts';
import { startRegistry, type TestRegistry } from '../../src/testkit/registry-process.ts';

const published = 'releases.molt.invalid:5000';
const repo = 'acme/installer';
const alice: Credentials = { username: 'alice', password: 's3cret' };

describe('image pull through a registry mirror (docker-registry 2.8)', () => {
  let plain: TestRegistry;
  let token: TestRegistry;
  before(async () => {
    [plain, token] = await Promise.all([
      startRegistry(),
      startRegistry({ auth: { kind: 'token', users: [alice] } }),
    ]);
  });
  after(async () => {
    await Promise.all([plain.stop(), token.stop()]);
  });

  it('pulls a signed release named by its published host from the mirror address', async () => {
    const client = createRegistryClient({ registry: plain.host, insecure: true });
    const dir = await tempDir('mirror');
    try {
      const pushed = await pushInstallerImage(client, repo, '1.0.0', {
        artifacts: { vmlinuz: 4000, 'rootfs.img': 50_000 },
      });
      const keys = generateKeyPair();
      const signature = signLegacy({
        privateKeyPem: keys.privateKeyPem,
        digest: pushed.digest,
        reference: `${published}/${repo}`,
      });
      await attachLegacySignature({ client, repository: repo, digest: pushed.digest, signature });
      const ref = `${published}/${repo}:1.0.0`;
      const options = { root: dir.path, registry: { insecure: true, retries: 0 } };
      const mirrored = createOciImageSource({
        ...options,
        mirrors: { [published]: plain.host },
        publicKeyPem: keys.publicKeyPem,
      });
      assert.deepEqual(await mirrored.pull(ref, 'B'), {
        imageRef: ref,
        imageDigest: pushed.digest,
        version: '1.0.0',
      });
      await assert.rejects(
        createOciImageSource(options).pull(ref, 'A'),
        (e: unknown) => isMoltError(e, ErrorCode.RegistryUnreachable),
        'without the mirror the published name does not resolve',
      );
    } finally {
      await client.close();
      await dir.remove();
    }
  });

  it('authenticates with the mirror’s token service', async () => {
    const client = createRegistryClient({
      registry: token.host,
      insecure: true,
      credentials: alice,
    });
    const dir = await tempDir('mirror');
    try {
      const pushed = await pushInstallerImage(client, repo, '1.1.0', {
        artifacts: { vmlinuz: 4000, 'rootfs.img': 50_000 },
      });
      const source = createOciImageSource({
        root: dir.path,
        // The credentials name the published registry: its mirror gets them as its stand-in.
        registry: { insecure: true, credentials: { registry: published, ...alice } },
        mirrors: { [published]: token.host },
      });
      const staged = await source.pull(`${published}/${repo}:1.1.0`, 'B');
      assert.equal(staged.imageDigest, pushed.digest);
      const asked = token.tokenServer?.requests.filter(
        (r) => r.user === 'alice' && r.status === 200,
      );
      assert.ok((asked?.length ?? 0) > 0, 'the pull took a token from the mirror’s token service');
    } finally {
      await client.close();
      await dir.remove();
    }
  });
});
