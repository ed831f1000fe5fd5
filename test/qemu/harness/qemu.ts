// SPDX-License-Identifier: Apache-2.0
/**
 * One power-on of the test machine, on molt's VM runner (src/lab/vm): qemu-system-x86_64 (TCG
 * here: KVM fails on these hosts), OVMF firmware with a writable variable store kept across the
 * boots of a scenario, and the ESP disk image. The serial
 * port is read for the payload's marker. A run ends when the payload powers off (a good boot),
 * when it panics (the harness cuts power at once: `panic=10` would reset the machine anyway), when
 * the firmware or bootloader gives up (UEFI shell, GRUB prompt or "Failed to boot both default and
 * fallback entries"), or at the timeout.
 */
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { serialSize } from '../../../src/lab/vm/serial-log.ts';
import { startVm } from '../../../src/lab/vm/vm.ts';
import { BootedMarker, PanicMarker } from './initramfs.ts';

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
  /** The VM's directory: its copy of OVMF_VARS (EFI variables persist across its boots) and console log. */
  readonly dir: string;
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

/**
 * Power the machine on once and wait (at most `timeoutMs`) for the boot to end. The VM runner
 * (src/lab/vm) with `noReboot` (a reset ends the run), no watchdog and no NIC (nothing to
 * network-boot when the disk fails), 256 MiB.
 */
export async function powerOn(m: Machine, timeoutMs = 180_000): Promise<BootResult> {
  const started = performance.now();
  const from = await serialSize(join(m.dir, 'serial.log')); // this power-on's console starts here
  const vm = await startVm({
    name: 'qemu-suite',
    dir: m.dir,
    disk: m.disk,
    memoryMiB: 256,
    watchdog: false,
    noReboot: true,
    network: false,
  });
  const marks: { firmwareDone?: number; payload?: number } = {};
  let out = '';
  for (;;) {
    const off = !vm.running; // before reading: what an exiting VM wrote counts
    out = await vm.serial(from);
    const now = Math.round(performance.now() - started);
    if (marks.firmwareDone === undefined && out.includes('BdsDxe: starting'))
      marks.firmwareDone = now;
    if (marks.payload === undefined && (BootedMarker.test(out) || PanicMarker.test(out)))
      marks.payload = now;
    if (off || KernelPanic.test(out) || StuckPatterns.some((p) => p.test(out))) break;
    if (performance.now() - started > timeoutMs) break;
    await sleep(200);
  }
  const poweredOff = !vm.running;
  await vm.powerCut();
  const serial = await vm.serial(from);
  return {
    ...classify(serial, poweredOff),
    ms: Math.round(performance.now() - started),
    marks,
    serial,
  };
}
