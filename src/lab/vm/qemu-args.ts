// SPDX-License-Identifier: Apache-2.0
/**
 * The qemu-system-x86_64 command line of a molt VM: a q35 machine booting OVMF from pflash (the
 * firmware read-only, the VM's own EFI variable store writable, so boot entries and variables
 * survive resets and power-ons), the disk on virtio-blk, user networking with TCP forwards from
 * the host's loopback, the serial console appended to a file, QMP on a unix socket, and an
 * i6300esb watchdog whose expiry resets the machine. No `-no-reboot` by default: a guest reboot,
 * a watchdog expiry and a QMP `system_reset` are real resets, as on hardware.
 */

/** Debian's OVMF (package `ovmf`): the 4 MiB build, no Secure Boot, no SMM requirement. */
export const OvmfCode = '/usr/share/OVMF/OVMF_CODE_4M.fd';
/** The variable store every VM starts from (copied once into the VM's directory). */
export const OvmfVarsTemplate = '/usr/share/OVMF/OVMF_VARS_4M.fd';

export type Accel = 'kvm' | 'tcg';

/** A host port forwarded to a guest port (TCP, the host side bound on 127.0.0.1 only). */
export interface PortForward {
  readonly hostPort: number;
  readonly guestPort: number;
}

export interface QemuSpec {
  readonly name: string;
  readonly accel: Accel;
  readonly memoryMiB: number;
  readonly cpus: number;
  /** The raw disk image (virtio-blk, the firmware's first boot device). */
  readonly disk: string;
  /** This VM's copy of OVMF_VARS. */
  readonly vars: string;
  readonly serialLog: string;
  readonly qmpSocket: string;
  /** Resolved forwards: every host port is a real port number here. */
  readonly forwards: readonly PortForward[];
  readonly watchdog: boolean;
  /** Exit instead of resetting (the QEMU suite's one-boot runs). */
  readonly noReboot: boolean;
  /** A NIC on user networking (carrying `forwards`); without it the VM has no network at all. */
  readonly network: boolean;
  /** A second NIC on an existing tap device (a lab bridge's port), with this MAC. */
  readonly tap?: TapNic | undefined;
}

/** A tap device made beforehand (root): QEMU opens it by name and runs no scripts. */
export interface TapNic {
  readonly ifname: string;
  readonly mac: string;
}

function cpuArgs(accel: Accel): string[] {
  // KVM: the host's CPU. TCG: `max` emulates every feature TCG has (SSE4.2, POPCNT, …), which
  // the default `qemu64` lacks and current userlands (Node 24's V8 among them) may expect.
  return accel === 'kvm' ? ['-accel', 'kvm', '-cpu', 'host'] : ['-accel', 'tcg', '-cpu', 'max'];
}

function netArgs(forwards: readonly PortForward[]): string[] {
  const fwd = forwards.map((f) => `,hostfwd=tcp:127.0.0.1:${f.hostPort}-:${f.guestPort}`);
  return ['-netdev', `user,id=n0${fwd.join('')}`, '-device', 'virtio-net-pci,netdev=n0'];
}

/** QEMU's argv (without the program name) for `spec`. */
export function qemuArgs(spec: QemuSpec): string[] {
  return [
    ['-name', spec.name],
    ['-machine', 'q35'],
    cpuArgs(spec.accel),
    ['-m', String(spec.memoryMiB), '-smp', String(spec.cpus)],
    ['-nodefaults', '-no-user-config', '-display', 'none'],
    spec.noReboot ? ['-no-reboot'] : [],
    ['-drive', `if=pflash,format=raw,unit=0,readonly=on,file=${OvmfCode}`],
    ['-drive', `if=pflash,format=raw,unit=1,file=${spec.vars}`],
    // QEMU's default on a failed host write is to pause the guest when the host is out of space
    // (`werror=enospc`), silently and for good: a full host disk froze a VM mid-boot with nothing
    // on its console. A real disk reports the error to its machine; so does this one.
    ['-drive', `file=${spec.disk},if=none,format=raw,id=d0,werror=report,rerror=report`],
    ['-device', 'virtio-blk-pci,drive=d0,bootindex=0'],
    spec.network ? netArgs(spec.forwards) : [],
    spec.tap === undefined
      ? []
      : [
          ...['-netdev', `tap,id=t0,ifname=${spec.tap.ifname},script=no,downscript=no`],
          ...['-device', `virtio-net-pci,netdev=t0,mac=${spec.tap.mac}`],
        ],
    // append=on: one file tells the machine's whole life, across power-ons.
    ['-chardev', `file,id=serial0,path=${spec.serialLog},append=on`, '-serial', 'chardev:serial0'],
    ['-qmp', `unix:${spec.qmpSocket},server=on,wait=off`],
    spec.watchdog ? ['-device', 'i6300esb', '-action', 'watchdog=reset'] : [],
  ].flat();
}
