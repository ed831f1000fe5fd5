// SPDX-License-Identifier: Apache-2.0
/**
 * One power-on of the test machine: qemu-system-x86_64 with TCG (no KVM), OVMF firmware with a
 * writable variable store kept across the boots of a scenario, and the ESP disk image. The serial
 * port is read for the payload's marker. A run ends when the payload powers off (a good boot),
 * when it panics (the harness cuts power at once: `panic=10` would reset the machine anyway), when
 * the firmware or bootloader gives up (UEFI shell, GRUB prompt or "Failed to boot both default and
 * fallback entries"), or at the timeout.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { startProcess } from '../../../src/platform/process/managed-process.ts';
import { BootedMarker, PanicMarker } from './initramfs.ts';

export const OvmfCode = '/usr/share/OVMF/OVMF_CODE_4M.fd';
export const OvmfVarsTemplate = '/usr/share/OVMF/OVMF_VARS_4M.fd';

export type BootOutcome = 'booted' | 'panicked' | 'no-boot';

export interface BootResult {
  /** The slot the payload reported (`molt.slot=` on the kernel command line), or null. */
  readonly slot: 'A' | 'B' | null;
  readonly outcome: BootOutcome;
  readonly ms: number;
  /** When (ms after start, ±200 ms) OVMF started the bootloader, and the payload printed its marker. */
  readonly marks: { readonly firmwareDone?: number; readonly payload?: number };
  /** Everything the machine printed on its serial port (firmware, bootloader, kernel, payload). */
  readonly serial: string;
}

export interface Machine {
  readonly disk: string;
  /** This machine's copy of OVMF_VARS (EFI variables persist across its boots). */
  readonly vars: string;
}

/** Stops waiting once the firmware or bootloader is stuck at an interactive prompt. */
const StuckPatterns = [
  /Shell> /,
  /grub rescue> /,
  /^grub> /m,
  /Failed to boot both default and fallback entries/,
];
/** The kernel's last words before the reset `panic=N` asks for (needs `console=ttyS0`). */
const KernelPanic = /Kernel panic - not syncing[\s\S]*(Rebooting in \d+ seconds|end Kernel panic)/;

function qemuArgs(m: Machine): string[] {
  return [
    '-machine',
    'q35',
    '-accel',
    'tcg',
    '-m',
    '256',
    '-smp',
    '1',
    '-nodefaults',
    '-no-reboot',
    '-display',
    'none',
    '-serial',
    'stdio',
    '-drive',
    `if=pflash,format=raw,unit=0,readonly=on,file=${OvmfCode}`,
    '-drive',
    `if=pflash,format=raw,unit=1,file=${m.vars}`,
    '-drive',
    `if=none,id=esp,format=raw,file=${m.disk}`,
    '-device',
    'virtio-blk-pci,drive=esp,bootindex=0',
  ];
}

function classify(
  serial: string,
  exited: boolean,
): { slot: 'A' | 'B' | null; outcome: BootOutcome } {
  const booted = BootedMarker.exec(serial);
  if (booted && exited) return { slot: (booted[1] || null) as 'A' | 'B' | null, outcome: 'booted' };
  const panic = PanicMarker.exec(serial);
  if (panic && KernelPanic.test(serial))
    return { slot: (panic[1] || null) as 'A' | 'B' | null, outcome: 'panicked' };
  return { slot: null, outcome: 'no-boot' };
}

/** Power the machine on once and wait (at most `timeoutMs`) for the boot to end. */
export async function powerOn(m: Machine, timeoutMs = 180_000): Promise<BootResult> {
  const started = performance.now();
  const qemu = startProcess('qemu', 'qemu-system-x86_64', qemuArgs(m));
  const state = { exited: false };
  void qemu.exited.then(() => {
    state.exited = true;
  });
  const marks: { firmwareDone?: number; payload?: number } = {};
  for (;;) {
    const out = qemu.output();
    const now = Math.round(performance.now() - started);
    if (marks.firmwareDone === undefined && out.includes('BdsDxe: starting'))
      marks.firmwareDone = now;
    if (marks.payload === undefined && (BootedMarker.test(out) || PanicMarker.test(out)))
      marks.payload = now;
    if (state.exited || KernelPanic.test(out) || StuckPatterns.some((p) => p.test(out))) break;
    if (performance.now() - started > timeoutMs) break;
    await sleep(200);
  }
  const poweredOff = state.exited;
  await qemu.stop(2_000);
  const serial = qemu.output();
  return {
    ...classify(serial, poweredOff),
    ms: Math.round(performance.now() - started),
    marks,
    serial,
  };
}
