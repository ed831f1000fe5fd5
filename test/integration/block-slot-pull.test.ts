// SPDX-License-Identifier: Apache-2.0
// The OCI image source writing the root filesystem straight into a slot partition (a region of a
// GPT disk image made with sfdisk) for the block-device slot store, against the real
// docker-registry 2.8 (docs/adr/0008 §3): descriptor checks, then `beforeOverwrite`, then the
// bytes; refusals with the partition untouched; a pull cut short is never trusted.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { open, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createBlockSlotStore } from '../../src/agent/adapters/block-slot-store/index.ts';
import { createOciImageSource } from '../../src/agent/adapters/oci-image-source/index.ts';
import type { InPlaceWrite } from '../../src/agent/ports/image-source.ts';
import type { SlotStore } from '../../src/agent/ports/slot-store.ts';
import { ErrorCode, isMoltError } from '../../src/core/errors.ts';
import { createRegistryClient, type OciRegistryClient } from '../../src/oci/index.ts';
import { tempDir } from '../../src/platform/process/managed-process.ts';
import { generateKeyPair } from '../../src/releases/index.ts';
import { makeDiskImage, type DiskImage } from '../../src/testkit/disk-image.ts';
import { pushInstallerImage } from '../../src/testkit/installer-image.ts';
import { startRegistry, type RunningRegistry } from '../../src/testkit/registry-process.ts';

const repo = 'acme/block';
const MiB = 1024 * 1024;

const sha = (b: Uint8Array): string => createHash('sha256').update(b).digest('hex');

async function region(disk: DiskImage, slot: 'A' | 'B'): Promise<Buffer> {
  const { offset, size } = disk.slots[slot];
  return (await readFile(disk.path)).subarray(offset, offset + size);
}

/** `inPlace` as the executor gives it, recording what the partition held when it was called. */
function inPlace(store: SlotStore, disk: DiskImage, calls: string[]) {
  return async (): Promise<InPlaceWrite> => ({
    targets: (await store.pullTargets?.('B')) ?? {},
    beforeOverwrite: async () => {
      calls.push(sha(await region(disk, 'B')));
    },
  });
}

describe('pull into a slot partition (docker-registry 2.8)', () => {
  let registry: RunningRegistry;
  let client: OciRegistryClient;
  let dir: { path: string; remove: () => Promise<void> };
  let disk: DiskImage;
  let store: SlotStore;
  before(async () => {
    registry = await startRegistry();
    client = createRegistryClient({ registry: registry.host, insecure: true });
    dir = await tempDir('block-pull');
    disk = await makeDiskImage(join(dir.path, 'disk.img'), 2);
    store = createBlockSlotStore(dir.path, { partitions: disk.slots });
  });
  after(async () => {
    await client.close();
    await registry.stop();
    await dir.remove();
  });
  const source = (publicKeyPem?: string) =>
    createOciImageSource({
      root: dir.path,
      registry: { insecure: true },
      ...(publicKeyPem !== undefined && { publicKeyPem }),
    });

  for (const format of ['raw', 'tar'] as const)
    it(`streams a ${format} image's rootfs into the partition after beforeOverwrite, then installs and verifies it`, async () => {
      const tag = `1.0.0-${format}`;
      const pushed = await pushInstallerImage(client, repo, tag, {
        format,
        artifacts: {
          vmlinuz: 5000,
          'rootfs.img': MiB + 123,
          cmdline: new TextEncoder().encode('quiet'),
        },
      });
      const calls: string[] = [];
      const empty = sha(await region(disk, 'B'));
      await source().pull(`${registry.host}/${repo}:${tag}`, 'B', {
        inPlace: await inPlace(store, disk, calls)(),
      });
      assert.equal(calls.length, 1, 'beforeOverwrite ran once');
      if (format === 'raw')
        assert.equal(calls[0], empty, 'before the first byte reached the partition');
      const rootfs = pushed.artifacts['rootfs.img'] ?? new Uint8Array();
      assert.ok((await region(disk, 'B')).subarray(0, rootfs.byteLength).equals(rootfs));
      await assert.rejects(
        readFile(join(dir.path, 'slots/b.next/rootfs.img')),
        'never staged as a file',
      );
      const m = await store.install('B', `op-${format}`);
      const record = m.artifacts['rootfs.img'];
      assert.ok(record !== undefined);
      assert.equal(record.size, rootfs.byteLength);
      assert.equal(record.digest, `sha256:${sha(rootfs)}`);
      assert.equal(record.path, 'slots/b/rootfs.img');
      assert.deepEqual(await store.verify('B', `op-${format}`), m);
      // A bit flipped on the partition: the read-back fails.
      const h = await open(disk.path, 'r+');
      await h.write(Buffer.from([rootfs[10]! ^ 1]), 0, 1, disk.slots.B.offset + 10);
      await h.close();
      await assert.rejects(store.verify('B', `op-${format}`), (e: unknown) =>
        isMoltError(e, ErrorCode.SlotVerifyFailed),
      );
    });

  it('refuses a rootfs larger than the partition, a bad cmdline and an unsigned image with nothing written and nothing marked', async () => {
    await pushInstallerImage(client, repo, 'big', {
      artifacts: { vmlinuz: 100, 'rootfs.img': 2 * MiB + 1 },
    });
    await pushInstallerImage(client, repo, 'cmdline', {
      artifacts: {
        vmlinuz: 100,
        'rootfs.img': 1000,
        cmdline: new TextEncoder().encode('init=/bin/sh; reboot'),
      },
    });
    const before = sha(await region(disk, 'B'));
    const cases = [
      ['big', ErrorCode.ImageTooLarge, undefined],
      ['cmdline', ErrorCode.ImageInvalid, undefined],
      ['1.0.0-raw', ErrorCode.SignatureMissing, generateKeyPair().publicKeyPem],
    ] as const;
    for (const [tag, code, key] of cases) {
      const calls: string[] = [];
      await assert.rejects(
        source(key).pull(`${registry.host}/${repo}:${tag}`, 'B', {
          inPlace: await inPlace(store, disk, calls)(),
        }),
        (e: unknown) => isMoltError(e, code),
        tag,
      );
      assert.deepEqual(calls, [], `${tag}: beforeOverwrite never ran`);
      assert.equal(sha(await region(disk, 'B')), before, `${tag}: the partition is untouched`);
    }
  });

  it('never trusts the partition after a pull cut short, nor a complete one whose bytes changed', async () => {
    const pushed = await pushInstallerImage(client, repo, 'crash', {
      artifacts: { vmlinuz: 100, 'rootfs.img': MiB },
    });
    const ref = `${registry.host}/${repo}:crash`;
    const rootfs = pushed.artifacts['rootfs.img'] ?? new Uint8Array();
    const opts = inPlace(store, disk, []);
    await source().pull(ref, 'B', { inPlace: await opts() });
    // A kill mid-pull: the record is not written yet, and the partition holds part of the bytes.
    await rm(join(dir.path, 'slots/b.next/staged.json'));
    const h = await open(disk.path, 'r+');
    await h.write(Buffer.alloc(4096), 0, 4096, disk.slots.B.offset + 8192);
    await h.close();
    assert.equal(await store.staged('B'), undefined, 'a half pull is not staged');
    await source().pull(ref, 'B', { inPlace: await opts() });
    assert.ok((await region(disk, 'B')).subarray(0, MiB).equals(rootfs), 'pulled again');
    // A complete record, but the partition changed since: re-pulled, not reused.
    const h2 = await open(disk.path, 'r+');
    await h2.write(Buffer.alloc(10), 0, 10, disk.slots.B.offset);
    await h2.close();
    await source().pull(ref, 'B', { inPlace: await opts() });
    await store.install('B', 'op-crash');
    await store.verify('B', 'op-crash');
  });
});
