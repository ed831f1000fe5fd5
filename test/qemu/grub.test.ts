// SPDX-License-Identifier: Apache-2.0
/**
 * The real GRUB 2.06 (Debian grub-efi-amd64-bin) under QEMU/OVMF, booting an ESP whose grub.cfg
 * and grubenv were written by molt's GRUB back-end (src/agent/adapters/grub). Proves boot-once,
 * commit, fallback and mark-bad end to end; see docs/qemu-suite.md.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { createGrubBootloader } from '../../src/agent/adapters/grub/index.ts';
import { expectBoot, timings, twoSlotMachine, type Scenario } from './harness/scenario.ts';

const scenarios: Scenario[] = [];
async function machine(b: Parameters<typeof twoSlotMachine>[2] = {}): Promise<Scenario> {
  const s = await twoSlotMachine('grub', createGrubBootloader, b);
  scenarios.push(s);
  return s;
}
after(async () => {
  for (const s of scenarios) await s.machine.dispose();
});

describe('GRUB under QEMU with molt-written grub.cfg and grubenv', () => {
  it('boot-once: an armed slot boots exactly once, then the committed slot again', async (t) => {
    const s = await machine();
    await expectBoot(s, 'A');
    await s.loader.armBootOnce('B');
    assert.equal((await s.loader.read()).oneShot, 'B');
    const trial = await expectBoot(s, 'B');
    // The menu title's version comes from grubenv (grub.cfg never changes): GRUB expanded it.
    assert.match(trial.serial, /Booting `molt 2\.0\.0 \(slot B\)'/);
    const view = await s.loader.read();
    assert.deepEqual(
      { committed: view.committed, oneShot: view.oneShot },
      { committed: 'A', oneShot: null },
      'GRUB consumed next_entry with save_env',
    );
    await expectBoot(s, 'A');
    t.diagnostic(timings(s));
  });

  it('commit: after molt commits the trial slot, every later boot boots it (and it is the fallback)', async (t) => {
    const s = await machine();
    await s.loader.armBootOnce('B');
    await expectBoot(s, 'B');
    await s.loader.commit('B');
    assert.equal((await s.loader.read()).committed, 'B');
    await expectBoot(s, 'B');
    await expectBoot(s, 'B');
    // B is entry 1: the fallback number grub.cfg derives from saved_entry must now be 1, not 0.
    await s.loader.armBootOnce('A');
    await s.machine.removeKernel('A');
    await expectBoot(s, 'B');
    t.diagnostic(timings(s));
  });

  it('fallback: an armed slot whose kernel is missing falls back to the committed slot in the same power-on', async (t) => {
    const s = await machine();
    await s.loader.armBootOnce('B');
    await s.machine.removeKernel('B');
    await expectBoot(s, 'A');
    const view = await s.loader.read();
    assert.deepEqual(
      { committed: view.committed, oneShot: view.oneShot },
      { committed: 'A', oneShot: null },
    );
    t.diagnostic(timings(s));
  });

  it('mark bad: a slot that panicked on its one boot is dropped and never boots again', async (t) => {
    const s = await machine({ init: 'panic' });
    await s.loader.armBootOnce('B');
    await expectBoot(s, 'B', 'panicked');
    await expectBoot(s, 'A');
    await s.loader.markBad('B');
    assert.deepEqual(
      (await s.loader.read()).entries.map((e) => e.slot),
      ['A'],
    );
    await assert.rejects(s.loader.armBootOnce('B'), /MOLT_BOOTLOADER_INVALID|no GRUB menu entry/);
    await expectBoot(s, 'A');
    t.diagnostic(timings(s));
  });
});
