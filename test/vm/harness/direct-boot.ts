// SPDX-License-Identifier: Apache-2.0
/**
 * A VM booted straight into an image's kernel and initramfs (QEMU direct kernel boot, TCG), with
 * the disk on virtio, user-mode networking, the i6300esb watchdog set to reset the VM, and the
 * serial console on stdout, read by the test. No bootloader (that is the installer's and the VM
 * runner's, src/lab/vm); no firmware either unless `vars` names a copy of OVMF's variable store:
 * then OVMF loads the kernel QEMU hands it, and the kernel has EFI runtime services (pstore in an
 * EFI variable). Stopped by PID.
 */
import { OvmfCode } from '../../../src/lab/vm/qemu-args.ts';
import {
  startProcess,
  type ManagedProcess,
} from '../../../src/platform/process/managed-process.ts';

export interface DirectBoot {
  readonly kernel: string;
  readonly initrd: string;
  readonly disk: string;
  /** The whole kernel command line. */
  readonly append: string;
  /** @default 1024 */
  readonly memoryMiB?: number;
  /** Boot through OVMF with this (writable) copy of its variable store. */
  readonly vars?: string;
}

/** The command line molt's boot entry gives slot `slot`, then the image's own arguments. */
export function slotCmdline(slot: 'A' | 'B', imageCmdline: string): string {
  return `molt.slot=${slot} root=PARTLABEL=molt-${slot.toLowerCase()} panic=10 ${imageCmdline.trim()}`;
}

export function qemuArgs(b: DirectBoot): string[] {
  return [
    '-machine',
    'q35',
    '-accel',
    'tcg',
    '-m',
    String(b.memoryMiB ?? 1024),
    '-smp',
    '1',
    '-nographic',
    ...(b.vars === undefined
      ? []
      : [
          '-drive',
          `if=pflash,format=raw,readonly=on,file=${OvmfCode}`,
          '-drive',
          `if=pflash,format=raw,file=${b.vars}`,
        ]),
    '-kernel',
    b.kernel,
    '-initrd',
    b.initrd,
    '-append',
    b.append,
    '-drive',
    `file=${b.disk},format=raw,if=virtio`,
    '-nic',
    'user,model=virtio-net-pci',
    '-device',
    'i6300esb',
    '-action',
    'watchdog=reset',
  ];
}

export function bootVm(b: DirectBoot): ManagedProcess {
  return startProcess('qemu', 'qemu-system-x86_64', qemuArgs(b));
}

/** ms since `t0` when `pattern` first shows on the console, or a rejection at the deadline. */
export async function timeTo(
  vm: ManagedProcess,
  pattern: RegExp,
  t0: number,
  deadlineMs: number,
): Promise<{ match: RegExpMatchArray; ms: number }> {
  const left = Math.max(1, deadlineMs - (performance.now() - t0));
  const match = await vm.waitFor(pattern, left);
  return { match, ms: Math.round(performance.now() - t0) };
}
