// SPDX-License-Identifier: Apache-2.0
/**
 * The real-machine scenarios (docs/real-machines.md), as steps over one VM each: every step starts from a
 * machine booted and idle and leaves it so. Steps wait on the serial console (markers the image
 * prints: `MOLT-BOOTED slot=X version=V`) and the agent's answers, each under a deadline; a VM that
 * misses one is a failed test, never a sleep.
 */
import assert from 'node:assert/strict';
import type { AgentStatus } from '../../../src/protocol/agent.ts';
import { bootctlView, grubEnv } from './disk-readback.ts';
import type { RealMachine } from './real-machine.ts';

/** Where the console was when a step began: markers after it belong to the step. */
export interface Cursor {
  at: number;
}

/** A slot and the release it runs. */
export interface Running {
  readonly slot: 'A' | 'B';
  readonly version: string;
}

export async function expectIdle(
  m: RealMachine,
  slot: 'A' | 'B',
  version: string,
): Promise<AgentStatus> {
  const s = await m.status();
  assert.equal(s.bootedSlot, slot, `${m.name} booted slot`);
  assert.equal(s.version, version, `${m.name} runs`);
  assert.equal(s.boot.committed, slot, `${m.name}: the committed slot is the booted one`);
  assert.equal(s.operation, null, `${m.name} is idle`);
  return s;
}

/** Scenario 1: the first boot of a fresh install. */
export async function firstBoot(m: RealMachine, version: string, c: Cursor): Promise<void> {
  const b = await m.booted(c.at);
  assert.deepEqual({ slot: b.slot, version: b.version }, { slot: 'A', version });
  c.at = b.end;
  const s = await expectIdle(m, 'A', version);
  assert.equal(s.slots.find((x) => x.slot === 'A')?.status, 'ready');
}

/** `molt node <verb> --follow`: the operation's events until its result, across the reboot. */
async function follow(m: RealMachine, args: readonly string[]): Promise<string> {
  const r = await m.molt([...args, '--follow']);
  return `${r.stdout}\n${r.stderr}`;
}

/** Scenario 2: an upgrade through a real reboot, committed on the other slot. */
export async function upgradeCommits(
  m: RealMachine,
  image: string,
  path: { from: Running; to: Running },
  c: Cursor,
): Promise<void> {
  const { from, to } = path;
  const out = await follow(m, ['node', 'upgrade', '--image', image]);
  const b = await m.booted(c.at);
  assert.deepEqual({ slot: b.slot, version: b.version }, to, `booted after the upgrade:\n${out}`);
  // The console shows the other slot's entry chosen: GRUB names it (systemd-boot, with no menu
  // shown, says nothing); the boot marker read the slot from the kernel's own command line.
  if (m.bootloader === 'grub')
    assert.match(
      await m.vm.serial(c.at),
      new RegExp(`Booting \`molt ${to.version.replace(/\./g, '\\.')} \\(slot ${to.slot}\\)'`),
    );
  c.at = b.end;
  const s = await expectIdle(m, to.slot, to.version);
  assert.equal(s.last?.result, 'Succeeded', JSON.stringify(s.last));
  const fromSlot = s.slots.find((x) => x.slot === from.slot);
  assert.deepEqual(
    { status: fromSlot?.status, version: fromSlot?.version },
    { status: 'ready', version: from.version },
    'the previous release stays as the fallback',
  );
}

/** After power-off the host reads the disk with the bootloader's own tools. */
export async function diskSaysCommitted(
  m: RealMachine,
  slot: 'A' | 'B',
  bootloader: string,
): Promise<void> {
  assert.equal(await m.vm.shutdown(120_000), true, 'the machine powered off by itself');
  const x = slot.toLowerCase();
  if (bootloader === 'grub') {
    const env = await grubEnv(m.disk);
    assert.equal(env['saved_entry'], `molt-${x}`, JSON.stringify(env));
    assert.ok(
      env['next_entry'] === undefined || env['next_entry'] === '',
      'no boot-once left armed',
    );
  } else {
    const view = await bootctlView(m.disk);
    assert.equal(view.defaultFile, `molt-${x}.conf`, JSON.stringify(view));
    assert.match(view.options[`molt-${x}`] ?? '', new RegExp(`root=PARTLABEL=molt-${x}`));
  }
}

/** Power on again: the committed slot boots again, with no operation. */
export async function staysOn(
  m: RealMachine,
  slot: 'A' | 'B',
  version: string,
  c: Cursor,
): Promise<void> {
  await m.vm.powerOn();
  const b = await m.booted(c.at);
  assert.deepEqual({ slot: b.slot, version: b.version }, { slot, version });
  c.at = b.end;
  await expectIdle(m, slot, version);
}

/** Scenario 7: a manual rollback to the other slot. */
export async function manualRollback(
  m: RealMachine,
  to: { slot: 'A' | 'B'; version: string },
  c: Cursor,
): Promise<void> {
  const out = await follow(m, ['node', 'rollback']);
  const b = await m.booted(c.at);
  assert.deepEqual({ slot: b.slot, version: b.version }, to, `after the rollback:\n${out}`);
  c.at = b.end;
  const s = await expectIdle(m, to.slot, to.version);
  // A requested rollback that worked ends `RolledBack` with reason `manual` (core/upgrade/state.ts).
  assert.equal(s.last?.kind, 'rollback');
  assert.deepEqual(
    { result: s.last.result, reason: s.last.reason },
    { result: 'RolledBack', reason: 'manual' },
  );
}

/**
 * Scenarios 3–5: a release that panics, never becomes healthy or hangs. The machine comes back
 * on the slot it ran, by itself, and the agent reports the rollback with its reason.
 */
export async function fallsBack(
  m: RealMachine,
  image: string,
  expect: { stay: Running; console: RegExp; reason: RegExp },
  c: Cursor,
): Promise<AgentStatus> {
  const { stay } = expect;
  const out = await follow(m, ['node', 'upgrade', '--image', image]);
  await m.vm.waitFor(expect.console, { deadlineMs: 300_000, from: c.at });
  const b = await m.booted(c.at, 480_000, stay.slot);
  assert.deepEqual({ slot: b.slot, version: b.version }, stay, `after the broken release:\n${out}`);
  c.at = b.end;
  const s = await expectIdle(m, stay.slot, stay.version);
  assert.equal(s.last?.result, 'RolledBack', JSON.stringify(s.last));
  assert.match(`${s.last.code ?? ''} ${s.last.reason ?? ''}`, expect.reason);
  return s;
}

/**
 * Scenario 8: a release whose rootfs.img changed after the build (os-release.ts `tampered`): the
 * trial boot opens the slot through dm-verity with the release's root hash, the squashfs's first
 * block fails its hash at the mount, the kernel panics and reboots, the bootloader falls back, and
 * the agent reads why from the panic's log that efi_pstore kept.
 */
export async function refusedByVerity(
  m: RealMachine,
  image: string,
  stay: Running,
  c: Cursor,
): Promise<void> {
  const slot = stay.slot === 'A' ? 'b' : 'a';
  const s = await fallsBack(
    m,
    image,
    {
      stay,
      console: new RegExp(
        `molt-verity: PARTLABEL=molt-${slot} \\(\\S+\\) opened verified[\\s\\S]*data block 0 is corrupted[\\s\\S]*Kernel panic - not syncing: dm-verity device corrupted`,
      ),
      reason: /^MOLT_VERITY_FAILED BootFailed$/,
    },
    c,
  );
  const why = new RegExp(
    `^slot ${slot.toUpperCase()} did not boot: its root does not match the release's root hash \\(dm-verity: \\S+ data block 0 is corrupted\\); the bootloader fell back to slot ${stay.slot}$`,
  );
  assert.match(s.last?.message ?? '', why);
  // The slot says the same where `molt node status` shows it.
  const bad = s.slots.find((x) => x.slot === slot.toUpperCase());
  assert.equal(bad?.status, 'bad');
  assert.match(
    bad.badReason ?? '',
    /MOLT_VERITY_FAILED: slot [AB] did not boot: its root does not match/,
  );
}
