// SPDX-License-Identifier: Apache-2.0
// The root filesystem's hash tree, checked by the real `veritysetup verify` (cryptsetup-bin):
// the tree appended at the next 4 KiB boundary verifies against the root hash the build reports;
// the same bytes give the same image and root; one flipped byte in the data fails verification.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { open, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { tempDir } from '../../platform/process/managed-process.ts';
import { appendVerity, type Verity } from './verity.ts';

const run = promisify(execFile);
const step = { step: 'test' };
let dir: Awaited<ReturnType<typeof tempDir>>;
const data = randomBytes(10_000);

before(async () => {
  dir = await tempDir('verity');
});
after(async () => {
  await dir.remove();
});

async function image(name: string): Promise<{ path: string; verity: Verity }> {
  const path = join(dir.path, name);
  await writeFile(path, data);
  return { path, verity: await appendVerity(path, step) };
}

/** `veritysetup verify` of the image against its root hash: exit 0, or the tool's complaint. */
async function verify(path: string, v: Verity): Promise<string> {
  return run('veritysetup', [
    ...['verify', path, path, v.rootHash, `--hash-offset=${String(v.hashOffset)}`],
  ]).then(
    () => 'verified',
    (e: unknown) => String((e as { stderr?: string }).stderr ?? e),
  );
}

describe('the root filesystem’s verity hash tree', () => {
  it('is appended at the next 4 KiB boundary and verifies against the root hash reported', async () => {
    const { path, verity } = await image('a.img');
    assert.equal(verity.hashOffset, 12_288);
    assert.match(verity.rootHash, /^[0-9a-f]{64}$/);
    assert.ok((await stat(path)).size > verity.hashOffset, 'the tree follows the data');
    const bytes = await readFile(path);
    assert.deepEqual(bytes.subarray(0, data.length), data, 'the data is unchanged');
    assert.ok(bytes.subarray(data.length, verity.hashOffset).every((b) => b === 0));
    assert.equal(await verify(path, verity), 'verified');
  });

  it('gives the same bytes and root for the same data (salt and UUID from its digest)', async () => {
    const a = await image('b1.img');
    const b = await image('b2.img');
    assert.deepEqual(b.verity, a.verity);
    assert.deepEqual(await readFile(b.path), await readFile(a.path));
  });

  it('fails verification after one byte of the data changed', async () => {
    const { path, verity } = await image('c.img');
    const f = await open(path, 'r+');
    try {
      await f.write(Buffer.from([data[5_000]! ^ 0xff]), 0, 1, 5_000);
    } finally {
      await f.close();
    }
    assert.match(await verify(path, verity), /Verification failed at position 4096/);
  });
});
