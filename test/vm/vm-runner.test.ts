// SPDX-License-Identifier: Apache-2.0
/**
 * The VM runner (src/lab/vm) on real QEMU + OVMF + GRUB + Linux: a tiny disk (test/vm/payload.ts)
 * boots, its forwarded port answers, a QMP reset and a power cut + power-on boot it again with
 * its EFI variables kept, and an armed watchdog that is never petted resets it by itself. Slow
 * (TCG boots), so it lives in test/vm: `bash scripts/qemu-setup.sh && node --test test/vm/`.
 * Every wait is a deadline on the serial console; nothing sleeps.
 */
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it, type TestContext } from 'node:test';
import { isMoltError } from '../../src/core/errors.ts';
import { tempDir } from '../../src/platform/process/managed-process.ts';
import { startVm, type Vm } from '../../src/lab/vm/vm.ts';
import {
  ArmedMarker,
  BootMarker,
  buildPayloadDisk,
  GuestHttpPort,
  ServingMarker,
} from './payload.ts';

const BootDeadlineMs = 180_000;
const s = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;

/** Wait for the next boot marker after byte `from`; returns its count and how long it took. */
async function nextBoot(vm: Vm, from: number, started: number): Promise<[number, number]> {
  const m = await vm.waitFor(BootMarker, { deadlineMs: BootDeadlineMs, from });
  return [Number(m[1]), performance.now() - started];
}

describe('the VM runner', { timeout: 15 * 60_000 }, () => {
  let work: { path: string; remove: () => Promise<void> };
  const vms: Vm[] = [];
  before(async () => {
    work = await tempDir('vm-runner');
  });
  after(async () => {
    for (const vm of vms) await vm.stop();
    if (process.env['MOLT_QEMU_KEEP'] === undefined) await work.remove();
  });

  it('boots, forwards a port, resets, and powers on again after a power cut with its EFI variables', async (t: TestContext) => {
    const disk = join(work.path, 'serve.img');
    await buildPayloadDisk(join(work.path, 'serve'), disk, 'serve');
    let started = performance.now();
    const vm = await startVm({
      name: 'serve',
      dir: join(work.path, 'vm-serve'),
      disk,
      forwards: [{ hostPort: 0, guestPort: GuestHttpPort }],
    });
    vms.push(vm);
    const port = vm.forwards[0]?.hostPort ?? 0;
    assert.ok(port > 0, 'a free host port was picked');
    const [n1, boot1] = await nextBoot(vm, 0, started);
    assert.equal(n1, 1);
    await vm.waitFor(ServingMarker, { deadlineMs: 60_000 });
    assert.equal(await (await fetch(`http://127.0.0.1:${port}/`)).text(), 'molt-vm n=1\n');

    let from = await vm.serialSize();
    const pid = vm.pid;
    started = performance.now();
    await vm.reset();
    const [n2, boot2] = await nextBoot(vm, from, started);
    assert.equal(n2, 2, 'the reset booted again with the same EFI variable store');
    assert.equal(vm.pid, pid, 'a reset is not a new QEMU process');

    from = await vm.serialSize();
    await vm.powerCut();
    assert.equal(vm.running, false);
    await assert.rejects(
      vm.waitFor(/never printed/, { deadlineMs: 60_000, from }),
      (e: unknown) => isMoltError(e, 'MOLT_VM_FAILED') && /the VM is off/.test(e.message),
    );
    started = performance.now();
    await vm.powerOn();
    assert.notEqual(vm.pid, pid);
    const [n3, boot3] = await nextBoot(vm, from, started);
    assert.equal(n3, 3, 'EFI variables survived the power cut');
    await vm.waitFor(ServingMarker, { deadlineMs: 60_000, from });
    assert.equal(await (await fetch(`http://127.0.0.1:${port}/`)).text(), 'molt-vm n=3\n');
    const log = await vm.serial();
    assert.match(log, /=== molt vm: power on 1 ===[\s\S]*=== molt vm: power on 2 ===/);
    assert.equal([...log.matchAll(new RegExp(BootMarker, 'g'))].length, 3, 'one log, three boots');

    await assert.rejects(
      vm.waitFor(/never printed/, { deadlineMs: 300 }),
      (e: unknown) => isMoltError(e, 'MOLT_VM_FAILED') && /MOLT-VM-SERVING/.test(e.message),
    );
    started = performance.now();
    const byItself = await vm.shutdown(5_000);
    const down = performance.now() - started;
    assert.equal(vm.running, false);
    await vm.stop(); // idempotent
    t.diagnostic(
      `accel ${vm.accel}; boot ${s(boot1)} (QEMU start → marker), after reset ${s(boot2)}, after power cut + power on ${s(boot3)}; shutdown ${byItself ? 'by the guest' : 'killed at the deadline'} in ${s(down)}`,
    );
  });

  it('resets by itself when the payload arms the watchdog and hangs', async (t: TestContext) => {
    const disk = join(work.path, 'hang.img');
    await buildPayloadDisk(join(work.path, 'hang'), disk, 'watchdog-hang');
    const started = performance.now();
    const vm = await startVm({ name: 'hang', dir: join(work.path, 'vm-hang'), disk });
    vms.push(vm);
    const pid = vm.pid;
    await vm.waitFor(BootMarker, { deadlineMs: BootDeadlineMs });
    const armed = await vm.waitFor(ArmedMarker, { deadlineMs: 60_000 });
    const armedAt = performance.now();
    const afterArmed = armed.index + armed[0].length;
    await vm.waitFor(/BdsDxe/, { deadlineMs: 120_000, from: afterArmed });
    const firmwareAt = performance.now();
    const [n, ms] = await nextBoot(vm, afterArmed, started);
    assert.equal(n, 2, 'the watchdog reset the machine: a second boot, EFI variables kept');
    assert.equal(vm.pid, pid, 'the same QEMU process: the reset came from the watchdog');
    assert.doesNotMatch(await vm.serial(), /power on 2/);
    t.diagnostic(
      `${armed[0]} after ${s(armedAt - started)}; firmware again ${s(firmwareAt - armedAt)} after arming; second boot marker ${s(ms - (armedAt - started))} after arming`,
    );
    await vm.stop();
  });
});

describe('the VM runner at start', () => {
  it('fails with QEMU’s reason when a forwarded port is taken', async () => {
    const work = await tempDir('vm-port');
    const taken = createServer();
    await new Promise<void>((done) => taken.listen(0, '127.0.0.1', done));
    const address = taken.address();
    const port = typeof address === 'object' && address !== null ? address.port : 0;
    try {
      const disk = join(work.path, 'disk.img');
      await writeFile(disk, Buffer.alloc(1024 * 1024));
      await assert.rejects(
        startVm({
          name: 'busy',
          dir: join(work.path, 'vm'),
          disk,
          forwards: [{ hostPort: port, guestPort: 22 }],
        }),
        (e: unknown) => isMoltError(e, 'MOLT_VM_FAILED') && /host forwarding rule/.test(e.message),
      );
    } finally {
      taken.close();
      await work.remove();
    }
  });
});
