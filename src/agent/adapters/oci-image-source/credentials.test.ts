// SPDX-License-Identifier: Apache-2.0
// The machine's registry password belongs to one registry: a reference that names another host
// (a release, a bundle, a pod's image) must not collect it, even when that host asks for it.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ErrorCode, isMoltError } from '../../../core/errors.ts';
import { createRegistryClient } from '../../../oci/index.ts';
import { tempDir } from '../../../platform/process/managed-process.ts';
import { startFakeRegistry, type FakeRegistry } from '../../../testkit/fake-registry.ts';
import { pushInstallerImage } from '../../../testkit/installer-image.ts';
import { MachineConfig } from '../../../protocol/machine-config.ts';
import { referencedRegistryOptions } from './config-options.ts';
import { createOciImageSource } from './index.ts';

const alice = { username: 'alice', password: 's3cret' };
const basic = `Basic ${Buffer.from('alice:s3cret').toString('base64')}`;
const repo = 'acme/installer';

describe('the image source’s registry credentials', () => {
  let own: FakeRegistry;
  let other: FakeRegistry;
  before(async () => {
    // Both ask for the same Basic credentials: the other host is one that wants to collect them.
    [own, other] = await Promise.all([
      startFakeRegistry({ basicAuth: alice }),
      startFakeRegistry({ basicAuth: alice }),
    ]);
    for (const r of [own, other]) {
      const client = createRegistryClient({ registry: r.host, insecure: true, credentials: alice });
      try {
        await pushInstallerImage(client, repo, '1.0.0', {
          artifacts: { vmlinuz: 1000, 'rootfs.img': 4000 },
        });
      } finally {
        await client.close();
      }
    }
  });
  after(async () => {
    await Promise.all([own.close(), other.close()]);
  });

  it('go to the registry they name, and to no other host a reference names', async () => {
    const dir = await tempDir('creds');
    try {
      const source = createOciImageSource({
        root: dir.path,
        registry: { insecure: true, retries: 0, credentials: { registry: own.host, ...alice } },
      });
      const heardBefore = other.requests.length;
      const staged = await source.pull(`${own.host}/${repo}:1.0.0`, 'B');
      assert.match(staged.imageDigest, /^sha256:/);
      await assert.rejects(source.pull(`${other.host}/${repo}:1.0.0`, 'A'), (e: unknown) =>
        isMoltError(e, ErrorCode.RegistryUnauthorized),
      );
      const heard = other.requests.slice(heardBefore);
      assert.ok(heard.length > 0, 'the pull did ask the other registry');
      assert.deepEqual(
        heard.filter((r) => r.authorization === basic),
        [],
        'the other registry never saw the password',
      );
    } finally {
      await dir.remove();
    }
  });

  it('that name no registry (registry.host unset) go to none; a pull that needs them says which key to set', async () => {
    const config = MachineConfig.parse({
      node: 'w1',
      role: 'worker',
      bootloader: 'grub',
      registry: { insecure: true, ...alice },
    });
    const dir = await tempDir('creds');
    try {
      const source = createOciImageSource({
        root: dir.path,
        registry: { ...referencedRegistryOptions(config.registry), retries: 0 },
      });
      const heardBefore = own.requests.length;
      await assert.rejects(
        source.pull(`${own.host}/${repo}:1.0.0`, 'A'),
        (e: unknown) =>
          isMoltError(e, ErrorCode.RegistryCredentialsWithheld) &&
          /registry\.host/.test(e.hint ?? ''),
      );
      const heard = own.requests.slice(heardBefore);
      assert.ok(heard.length > 0, 'the pull did ask the registry');
      assert.deepEqual(
        heard.filter((r) => r.authorization !== undefined),
        [],
        'no registry saw the password',
      );
    } finally {
      await dir.remove();
    }
  });
});
