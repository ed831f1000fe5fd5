// SPDX-License-Identifier: Apache-2.0
/**
 * A VM whose console falls silent: the wait's error says what QEMU says of the guest and how much
 * room the host has left, so a guest QEMU paused is never mistaken for a guest that hangs.
 */
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { tempDir } from '../../src/platform/process/managed-process.ts';
import { qmpExecute } from '../../src/lab/vm/qmp.ts';
import { startVm, type Vm } from '../../src/lab/vm/vm.ts';

describe('a VM console that stays silent', () => {
  let dir: { path: string; remove: () => Promise<void> };
  let vm: Vm;
  before(async () => {
    dir = await tempDir('molt-quiet-');
    const disk = join(dir.path, 'disk.img');
    await writeFile(disk, Buffer.alloc(1024 * 1024)); // nothing to boot: the firmware idles
    vm = await startVm({
      name: 'quiet',
      dir: join(dir.path, 'vm'),
      disk,
      network: false,
      accel: 'tcg',
    });
  });
  after(async () => {
    await vm.stop();
    await dir.remove();
  });

  const silence = async (): Promise<string> => {
    const e = await vm.waitFor(/never printed/, { deadlineMs: 300 }).then(
      () => assert.fail('the pattern cannot appear'),
      (x: unknown) => x as { code?: string; message: string },
    );
    assert.equal(e.code, 'MOLT_VM_FAILED');
    return e.message;
  };

  it('says QEMU paused the guest, and how much space the host has', async () => {
    await qmpExecute(vm.qmpSocket, 'stop');
    const message = await silence();
    assert.match(message, /never appeared on its console: not within 300 ms/);
    assert.match(
      message,
      /QEMU has paused the guest: paused; the host has \d+ MiB free where the disk lives/,
    );
  });

  it('says the guest is running when QEMU runs it', async () => {
    await qmpExecute(vm.qmpSocket, 'cont');
    assert.match(await silence(), /QEMU says the guest is running;/);
  });

  it('says nothing more once the VM is off', async () => {
    await vm.stop();
    const message = await silence();
    assert.match(message, /the VM is off/);
    assert.doesNotMatch(message, /QEMU (says|has paused)/);
  });
});
