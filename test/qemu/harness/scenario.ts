// SPDX-License-Identifier: Apache-2.0
/** Shared steps of the bootloader scenarios (test/qemu/*.test.ts). */
import assert from 'node:assert/strict';
import type { SlotId } from '../../../src/core/slots/slot.ts';
import type { Bootloader } from '../../../src/agent/ports/bootloader.ts';
import {
  createTestMachine,
  type BootloaderKind,
  type SlotPayload,
  type TestMachine,
} from './machine.ts';
import type { BootOutcome, BootResult } from './qemu.ts';

export interface Scenario {
  readonly machine: TestMachine;
  readonly loader: Bootloader;
}

/**
 * A machine on which slot A (generation 1) is written and committed and slot B (generation 2,
 * `b`) is written with its boot entry — the state right before `ArmBootOnce`.
 */
export async function twoSlotMachine(
  kind: BootloaderKind,
  createLoader: (root: string) => Bootloader,
  b: Partial<SlotPayload> = {},
): Promise<Scenario> {
  const machine = await createTestMachine(kind);
  const loader = createLoader(machine.root);
  await loader.writeEntry('A', await machine.installSlot('A', { version: '1.0.0', generation: 1 }));
  await loader.commit('A');
  await loader.writeEntry(
    'B',
    await machine.installSlot('B', { version: '2.0.0', generation: 2, ...b }),
  );
  return { machine, loader };
}

const AnsiEscape = new RegExp(`${String.fromCharCode(27)}\\[[0-9;=?]*[A-Za-z]`, 'g');

function tail(r: BootResult): string {
  return r.serial.replace(AnsiEscape, '').slice(-2500);
}

/** Power on once and assert which slot the real bootloader chose and how the boot ended. */
export async function expectBoot(
  s: Scenario,
  slot: SlotId | null,
  outcome: BootOutcome = 'booted',
): Promise<BootResult> {
  const r = await s.machine.boot();
  assert.deepEqual(
    { outcome: r.outcome, slot: r.slot },
    { outcome, slot },
    `boot ${s.machine.boots.length} (${r.ms} ms):\n${tail(r)}`,
  );
  return r;
}

const s1 = (ms: number | undefined): string => (ms === undefined ? '-' : (ms / 1000).toFixed(1));

/** One line per boot for the timing table in docs/qemu-suite.md (printed with `--test-reporter=spec`). */
export function timings(s: Scenario): string {
  return s.machine.boots
    .map(
      (b, i) =>
        `boot ${i + 1}: ${b.outcome} ${b.slot ?? '-'} in ${s1(b.ms)} s (firmware ${s1(b.marks.firmwareDone)} s, payload ${s1(b.marks.payload)} s)`,
    )
    .join('; ');
}
