// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { qemuArgs, type QemuSpec } from './qemu-args.ts';

const spec: QemuSpec = {
  name: 'vm-1',
  accel: 'tcg',
  memoryMiB: 1024,
  cpus: 2,
  disk: '/vms/vm-1/disk.img',
  vars: '/vms/vm-1/vars.fd',
  serialLog: '/vms/vm-1/serial.log',
  qmpSocket: '/vms/vm-1/qmp.sock',
  forwards: [
    { hostPort: 40001, guestPort: 7443 },
    { hostPort: 40002, guestPort: 22 },
  ],
  watchdog: true,
  noReboot: false,
  network: true,
};

/** The value following `flag` each time it occurs. */
const values = (args: string[], flag: string): string[] =>
  args.flatMap((a, i) => (a === flag ? [args[i + 1] ?? ''] : []));

describe('qemuArgs', () => {
  it('boots OVMF from pflash with the VM’s own variable store and the disk on virtio-blk, reporting host I/O errors to the guest instead of pausing it', () => {
    const args = qemuArgs(spec);
    assert.deepEqual(values(args, '-drive'), [
      'if=pflash,format=raw,unit=0,readonly=on,file=/usr/share/OVMF/OVMF_CODE_4M.fd',
      'if=pflash,format=raw,unit=1,file=/vms/vm-1/vars.fd',
      'file=/vms/vm-1/disk.img,if=none,format=raw,id=d0,werror=report,rerror=report',
    ]);
    assert.ok(values(args, '-device').includes('virtio-blk-pci,drive=d0,bootindex=0'));
    assert.deepEqual(values(args, '-machine'), ['q35']);
    assert.deepEqual([values(args, '-m'), values(args, '-smp')], [['1024'], ['2']]);
  });

  it('puts a second NIC on a tap device made beforehand, with its MAC, and runs no scripts', () => {
    assert.deepEqual(values(qemuArgs(spec), '-netdev').length, 1, 'no tap unless asked');
    const args = qemuArgs({ ...spec, tap: { ifname: 'mt3-vm-1', mac: '52:54:00:e7:03:0b' } });
    assert.deepEqual(values(args, '-netdev').slice(1), [
      'tap,id=t0,ifname=mt3-vm-1,script=no,downscript=no',
    ]);
    assert.ok(values(args, '-device').includes('virtio-net-pci,netdev=t0,mac=52:54:00:e7:03:0b'));
  });

  it('forwards host loopback ports to the guest over user networking', () => {
    assert.deepEqual(values(qemuArgs(spec), '-netdev'), [
      'user,id=n0,hostfwd=tcp:127.0.0.1:40001-:7443,hostfwd=tcp:127.0.0.1:40002-:22',
    ]);
  });

  it('appends the serial console to a file and speaks QMP on a unix socket', () => {
    const args = qemuArgs(spec);
    assert.deepEqual(values(args, '-chardev'), [
      'file,id=serial0,path=/vms/vm-1/serial.log,append=on',
    ]);
    assert.deepEqual(values(args, '-serial'), ['chardev:serial0']);
    assert.deepEqual(values(args, '-qmp'), ['unix:/vms/vm-1/qmp.sock,server=on,wait=off']);
  });

  it('resets on a watchdog expiry and on reboots unless asked for one-boot runs', () => {
    const args = qemuArgs(spec);
    assert.ok(values(args, '-device').includes('i6300esb'));
    assert.deepEqual(values(args, '-action'), ['watchdog=reset']);
    assert.ok(!args.includes('-no-reboot'));
    const once = qemuArgs({ ...spec, watchdog: false, noReboot: true, network: false });
    assert.ok(once.includes('-no-reboot'));
    assert.deepEqual(values(once, '-netdev'), []);
    assert.ok(!values(once, '-device').includes('i6300esb'));
  });

  it('uses the host CPU under KVM and every emulated feature under TCG', () => {
    assert.deepEqual(values(qemuArgs(spec), '-cpu'), ['max']);
    assert.deepEqual(values(qemuArgs({ ...spec, accel: 'kvm' }), '-accel'), ['kvm']);
    assert.deepEqual(values(qemuArgs({ ...spec, accel: 'kvm' }), '-cpu'), ['host']);
  });
});
