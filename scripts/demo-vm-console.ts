// SPDX-License-Identifier: Apache-2.0
// The demo's view of a VM's serial console (demo-vm.ts): the lines that tell the boot story.
import { logTail, readSerial } from '../src/lab/vm/serial-log.ts';
import type { LabVmRecord } from '../src/lab/state.ts';
import { dim } from './demo-terminal.ts';

/** The console lines since `from` that tell the boot story (bootloader, panic, boot marker). */
export async function excerpt(vm: LabVmRecord, from: number): Promise<string[]> {
  const text = logTail(await readSerial(vm.serialLog, from), 1_000_000);
  return text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) =>
      /Booting `molt|MOLT-BOOTED|Kernel panic|Rebooting in|=== molt vm: power on/.test(l),
    )
    .map((l) => l.replace(/ boot=\S+ uptime=\S+$/, ''));
}

export function showConsole(vm: LabVmRecord, lines: readonly string[]): void {
  console.log(dim(`    ${vm.name}'s console (${vm.serialLog}):`));
  for (const l of lines) console.log(`      ${l}`);
}
