// SPDX-License-Identifier: Apache-2.0
/**
 * A tiny bootable disk for the VM runner's tests: a GPT disk whose ESP holds the real GRUB
 * (grub-mkimage, as in the QEMU suite), Debian's generic kernel (the cloud kernel has no
 * i6300esb driver) and a busybox initramfs written here. Its `/init`:
 *
 * - counts its boots in EFI variables (one `MoltVmBoot<n>-…` per boot, through efivarfs) and prints
 *   `MOLT-VM-BOOT n=<count>`: the count goes on across resets and power-ons only if the VM's
 *   variable store persists;
 * - `serve`: brings up virtio-net at 10.0.2.15 (QEMU user networking) and serves `molt-vm n=<count>`
 *   over HTTP on port 8080 (`MOLT-VM-SERVING`), then idles;
 * - `watchdog-hang`: loads i6300esb with a 5 s heartbeat, opens /dev/watchdog
 *   (`MOLT-VM-WATCHDOG-ARMED`) and hangs without ever petting it.
 */
import { readdir, readFile, mkdir, writeFile, copyFile, stat } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { cpioNewc, type CpioEntry } from '../qemu/harness/cpio.ts';
import { writeEspImage } from '../qemu/harness/esp.ts';
import { buildGrubEfi } from '../../src/image/install/grub-efi.ts';
import { qemuCache } from '../qemu/harness/cache.ts';

export type PayloadBehaviour = 'serve' | 'watchdog-hang';

/** A boot: `MOLT-VM-BOOT n=3`. */
export const BootMarker = /MOLT-VM-BOOT n=(\d+)/;
export const ServingMarker = /MOLT-VM-SERVING/;
export const ArmedMarker = /MOLT-VM-WATCHDOG-ARMED timeout=\d*/;
export const GuestHttpPort = 8080;

/** The vendor GUID of the tests' EFI variables (random: no firmware variable is touched). */
const CounterGuid = '6a0f7d84-3c5e-4b8e-9d0f-2f4c6e1a7b35';

function initScript(behaviour: PayloadBehaviour): string {
  const bb = '/bin/busybox';
  const common = [
    '#!/bin/busybox sh',
    `${bb} mount -t proc proc /proc`,
    `${bb} mount -t sysfs sys /sys`,
    `${bb} mount -t devtmpfs dev /dev`,
    `${bb} depmod`,
    `${bb} modprobe efivarfs`,
    `${bb} mount -t efivarfs efivarfs /sys/firmware/efi/efivars`,
    // One new variable per boot: efivarfs makes variables immutable, and busybox has no chattr.
    `n=$(($(${bb} ls /sys/firmware/efi/efivars | ${bb} grep -c '^MoltVmBoot') + 1))`,
    // efivarfs takes a variable in one write: 4 bytes of attributes (NV|BS|RT), then the data.
    `${bb} printf "\\007\\000\\000\\000$n" > /sys/firmware/efi/efivars/MoltVmBoot$n-${CounterGuid}`,
    'echo "MOLT-VM-BOOT n=$n" > /dev/ttyS0',
  ];
  const serve = [
    // virtio_pci is the transport (not a dependency of virtio_net); the device appears async.
    `${bb} modprobe virtio_pci`,
    `${bb} modprobe virtio_net`,
    `for i in 1 2 3 4 5 6 7 8 9 10; do [ -e /sys/class/net/eth0 ] && break; ${bb} sleep 1; done`,
    `${bb} ip link set lo up`,
    `${bb} ip link set eth0 up`,
    `${bb} ip addr add 10.0.2.15/24 dev eth0`,
    `${bb} mkdir -p /www`,
    'echo "molt-vm n=$n" > /www/index.html',
    `${bb} httpd -p ${GuestHttpPort} -h /www`,
    'echo "MOLT-VM-SERVING" > /dev/ttyS0',
  ];
  const hang = [
    `${bb} modprobe i6300esb heartbeat=5`,
    'exec 3>/dev/watchdog',
    'echo "MOLT-VM-WATCHDOG-ARMED timeout=$(cat /sys/class/watchdog/watchdog0/timeout)" > /dev/ttyS0',
  ];
  const idle = `while :; do ${bb} sleep 3600; done`;
  return [...common, ...(behaviour === 'serve' ? serve : hang), idle, ''].join('\n');
}

/** Where scripts/qemu-setup.sh put the generic kernel and its modules. */
function vmKernel(): { vmlinuz: string; lib: string } {
  const dir = join(qemuCache().kernel, '..', 'vmkernel');
  return { vmlinuz: join(dir, 'vmlinuz'), lib: join(dir, 'lib') };
}

/** cpio entries for the tree under `root` (dirs before their files), named `prefix/…`. */
async function tree(root: string, prefix: string): Promise<CpioEntry[]> {
  const out: CpioEntry[] = [{ kind: 'dir', name: prefix }];
  for (const e of await readdir(root, { withFileTypes: true })) {
    const path = join(root, e.name);
    const name = `${prefix}/${relative(root, path)}`;
    if (e.isDirectory()) out.push(...(await tree(path, name)));
    else out.push({ kind: 'file', name, data: await readFile(path) });
  }
  return out;
}

async function initramfs(behaviour: PayloadBehaviour): Promise<Buffer> {
  const busybox = await readFile(qemuCache().busybox);
  return cpioNewc([
    ...['bin', 'dev', 'proc', 'sys', 'tmp'].map((name) => ({ kind: 'dir' as const, name })),
    { kind: 'chardev', name: 'dev/console', major: 5, minor: 1 },
    { kind: 'file', name: 'bin/busybox', data: busybox, mode: 0o755 },
    { kind: 'symlink', name: 'bin/sh', target: 'busybox' },
    ...(await tree(vmKernel().lib, 'lib')),
    { kind: 'file', name: 'init', data: Buffer.from(initScript(behaviour)), mode: 0o755 },
  ]);
}

/** Write a bootable raw disk at `disk` (its ESP staged in `work`) running `behaviour`. */
export async function buildPayloadDisk(
  work: string,
  disk: string,
  behaviour: PayloadBehaviour,
): Promise<{ bytes: number }> {
  const esp = join(work, 'esp');
  await mkdir(join(esp, 'EFI', 'BOOT'), { recursive: true });
  await mkdir(join(esp, 'grub'), { recursive: true });
  await mkdir(join(esp, 'vm'), { recursive: true });
  await buildGrubEfi(join(esp, 'EFI', 'BOOT', 'BOOTX64.EFI'));
  await copyFile(vmKernel().vmlinuz, join(esp, 'vm', 'vmlinuz'));
  await writeFile(join(esp, 'vm', 'initrd.img'), await initramfs(behaviour));
  await writeFile(
    join(esp, 'grub', 'grub.cfg'),
    'set timeout=0\nmenuentry vm {\n  linux /vm/vmlinuz console=ttyS0 panic=10 quiet\n  initrd /vm/initrd.img\n}\n',
  );
  await writeEspImage(esp, disk);
  return { bytes: (await stat(disk)).size };
}
