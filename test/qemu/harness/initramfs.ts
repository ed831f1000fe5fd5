// SPDX-License-Identifier: Apache-2.0
/**
 * The payload every QEMU boot runs: an initramfs holding busybox-static and an `/init` script that
 * reports which slot the bootloader chose (`molt.slot=` on /proc/cmdline) on the serial port, then
 * powers off — so one QEMU run is exactly one boot. The `panic` variant reports and then exits
 * init, which makes the kernel panic (and, with `panic=10` on the command line, reset): the
 * stand-in for a slot whose kernel boots but whose system does not come up.
 */
import { readFile } from 'node:fs/promises';
import { cpioNewc } from './cpio.ts';

export type InitBehaviour = 'ok' | 'panic';

/** Serial line printed by a slot that came up: `MOLT-BOOTED slot=B`. */
export const BootedMarker = /MOLT-BOOTED slot=([AB]?)/;
/** Serial line printed just before the kernel panics. */
export const PanicMarker = /MOLT-PANIC slot=([AB]?)/;

function initScript(behaviour: InitBehaviour): string {
  const bb = '/bin/busybox';
  const word = behaviour === 'ok' ? 'MOLT-BOOTED' : 'MOLT-PANIC';
  return [
    '#!/bin/busybox sh',
    `${bb} mount -t proc proc /proc`,
    `${bb} mount -t devtmpfs dev /dev`,
    `slot=$(${bb} sed -n 's/.*molt\\.slot=\\([^ ]*\\).*/\\1/p' /proc/cmdline)`,
    `echo "${word} slot=$slot cmdline=$(${bb} cat /proc/cmdline)" > /dev/ttyS0`,
    behaviour === 'ok' ? `${bb} poweroff -f` : 'exit 1',
    '',
  ].join('\n');
}

/** The initramfs bytes (uncompressed newc cpio) for `behaviour`, from the busybox binary at `busyboxPath`. */
export async function buildInitramfs(
  busyboxPath: string,
  behaviour: InitBehaviour,
): Promise<Buffer> {
  const busybox = await readFile(busyboxPath);
  return cpioNewc([
    { kind: 'dir', name: 'bin' },
    { kind: 'dir', name: 'dev' },
    { kind: 'dir', name: 'proc' },
    { kind: 'chardev', name: 'dev/console', major: 5, minor: 1 },
    { kind: 'file', name: 'bin/busybox', data: busybox, mode: 0o755 },
    { kind: 'symlink', name: 'bin/sh', target: 'busybox' },
    { kind: 'file', name: 'init', data: Buffer.from(initScript(behaviour)), mode: 0o755 },
  ]);
}
