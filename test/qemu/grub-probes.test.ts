// SPDX-License-Identifier: Apache-2.0
/**
 * Questions docs/adr/0004 left "(to verify)", asked of the real GRUB 2.06 with hand-written
 * grub.cfg files (harness/handwritten.ts) that molt itself never writes:
 * - does `set fallback="${saved_entry}"` accept an entry id? No: only entry numbers.
 * - what boots when `next_entry` names an id that is not in grub.cfg? Entry 0, and GRUB still
 *   consumes `next_entry`.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { grubCfg, grubenv, writeGrubFiles } from './harness/handwritten.ts';
import { createTestMachine, SlotCmdline, type TestMachine } from './harness/machine.ts';

const machines: TestMachine[] = [];
after(async () => {
  for (const m of machines) await m.dispose();
});

/** Slots A (entry 0) and B (entry 1) installed, grub.cfg and grubenv hand-written. */
async function machine(env: Record<string, string>, fallback?: string): Promise<TestMachine> {
  const m = await createTestMachine('grub');
  machines.push(m);
  await m.installSlot('A', { version: '1', generation: 1 });
  await m.installSlot('B', { version: '2', generation: 2 });
  const entries = (['A', 'B'] as const).map((s) => {
    const x = s.toLowerCase();
    return {
      id: `molt-${x}`,
      kernel: `/molt/${x}/vmlinuz`,
      initrd: `/molt/${x}/initrd.img`,
      options: `molt.slot=${s} panic=10 ${SlotCmdline}`,
    };
  });
  await writeGrubFiles(join(m.root, 'esp'), grubCfg(entries, fallback), grubenv(env));
  return m;
}

async function envVars(m: TestMachine): Promise<string[]> {
  const text = await readFile(join(m.root, 'esp', 'grub', 'grubenv'), 'latin1');
  assert.equal(text.length, 1024, 'GRUB keeps the block at 1024 bytes');
  return text.split('\n').filter((l) => l !== '' && !l.startsWith('#'));
}

describe('GRUB 2.06 facts molt relies on', () => {
  it('`fallback` set to an entry id is ignored: the failed boot-once entry leaves the machine at the menu', async () => {
    const m = await machine({ saved_entry: 'molt-a', next_entry: 'molt-b' }, '${saved_entry}');
    await m.removeKernel('B');
    const r = await m.boot();
    assert.equal(r.outcome, 'no-boot');
    assert.match(r.serial, /Failed to boot both default and fallback entries/);
  });

  it('`next_entry` naming a missing id boots entry 0 (not saved_entry, not fallback) and is consumed', async () => {
    const m = await machine({ saved_entry: 'molt-b', next_entry: 'molt-x' }, '1');
    const r = await m.boot();
    assert.deepEqual({ outcome: r.outcome, slot: r.slot }, { outcome: 'booted', slot: 'A' });
    assert.deepEqual(await envVars(m), ['saved_entry=molt-b', 'next_entry=']);
  });
});
