// SPDX-License-Identifier: Apache-2.0
/**
 * The real systemd-boot 252 (Debian systemd-boot-efi) under QEMU/OVMF, booting an ESP whose
 * loader.conf and Boot Loader Spec entries were written by molt's sd-boot back-end
 * (src/agent/adapters/sdboot). Proves boot-once (a `+1` boot counter), commit, fallback and
 * mark-bad end to end; see docs/qemu-suite.md.
 */
import assert from 'node:assert/strict';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { createSdBootBootloader } from '../../src/agent/adapters/sdboot/index.ts';
import { expectBoot, timings, twoSlotMachine, type Scenario } from './harness/scenario.ts';

const scenarios: Scenario[] = [];
async function machine(b: Parameters<typeof twoSlotMachine>[2] = {}): Promise<Scenario> {
  const s = await twoSlotMachine('sdboot', createSdBootBootloader, b);
  scenarios.push(s);
  return s;
}
after(async () => {
  for (const s of scenarios) await s.machine.dispose();
});

async function entryFiles(s: Scenario): Promise<string[]> {
  return (await readdir(join(s.machine.root, 'esp', 'loader', 'entries'))).sort();
}

describe('systemd-boot under QEMU with molt-written Boot Loader Spec entries', () => {
  it('boot-once: an armed slot boots exactly once (sd-boot spends its counter), then the committed slot again', async (t) => {
    const s = await machine();
    await expectBoot(s, 'A');
    await s.loader.armBootOnce('B');
    assert.deepEqual(await entryFiles(s), ['molt-a.conf', 'molt-b+1.conf']);
    await expectBoot(s, 'B');
    assert.deepEqual(
      await entryFiles(s),
      ['molt-a.conf', 'molt-b+0-1.conf'],
      'sd-boot renamed the entry before booting it',
    );
    const view = await s.loader.read();
    assert.deepEqual(
      { committed: view.committed, oneShot: view.oneShot },
      { committed: 'A', oneShot: null },
    );
    await expectBoot(s, 'A');
    t.diagnostic(timings(s));
  });

  it('commit: after molt commits the trial slot, every later boot boots it', async (t) => {
    const s = await machine();
    await s.loader.armBootOnce('B');
    await expectBoot(s, 'B');
    await s.loader.commit('B');
    assert.equal((await s.loader.read()).committed, 'B');
    await expectBoot(s, 'B');
    await expectBoot(s, 'B');
    t.diagnostic(timings(s));
  });

  it('fallback: an armed slot whose kernel is missing is skipped; the committed slot boots in the same power-on', async (t) => {
    const s = await machine();
    await s.loader.armBootOnce('B');
    await s.machine.removeKernel('B');
    await expectBoot(s, 'A');
    // sd-boot 252 drops an entry whose `linux` file does not exist while loading the menu, so it
    // never counts a try: the entry stays armed until molt (Recovering → MarkSlotBad) removes it.
    assert.deepEqual(await entryFiles(s), ['molt-a.conf', 'molt-b+1.conf']);
    await s.loader.markBad('B');
    await expectBoot(s, 'A');
    t.diagnostic(timings(s));
  });

  it('mark bad: a slot that panicked on its one boot is removed and never boots again', async (t) => {
    const s = await machine({ init: 'panic' });
    await s.loader.armBootOnce('B');
    await expectBoot(s, 'B', 'panicked');
    await expectBoot(s, 'A');
    await s.loader.markBad('B');
    assert.deepEqual(await entryFiles(s), ['molt-a.conf']);
    await assert.rejects(s.loader.armBootOnce('B'), /no boot loader entry/);
    await expectBoot(s, 'A');
    t.diagnostic(timings(s));
  });
});
