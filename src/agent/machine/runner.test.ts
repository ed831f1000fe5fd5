// SPDX-License-Identifier: Apache-2.0
// The runner on fakes: whole operations across simulated reboots and agent crashes. Each "boot"
// is a new runner on the same journal and fakes, as a restarted agent would be.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isMoltError } from '../../core/errors.ts';
import type { LabBehaviour, SlotId } from '../../core/slots/slot.ts';
import { kubeNodeReady } from '../adapters/health/checks.ts';
import { labSlotHealth } from '../adapters/lab/slot-health.ts';
import { createNoClusterKubeNode } from '../adapters/no-cluster/index.ts';
import type { KubeNode } from '../ports/kube-node.ts';
import { createFakeBootloader } from '../ports/bootloader.fake.ts';
import { createFakeClock } from '../ports/clock.fake.ts';
import { createFakeImageSource, type FakeImage } from '../ports/image-source.fake.ts';
import { createMemoryHoldStore } from '../ports/hold-store.fake.ts';
import { createMemoryJournalStore } from '../ports/journal-store.fake.ts';
import { createFakeMounts } from '../ports/mounts.fake.ts';
import { createFakePower } from '../ports/power.fake.ts';
import { createFakeServices } from '../ports/services.fake.ts';
import { FakeSlotStore } from '../ports/slot-store.fake.ts';
import { loadHolds, type Holds } from './hold.ts';
import type { FaultPoints } from './ports.ts';
import { createRunner, type Runner } from './runner.ts';

const image = (version: string, lab?: LabBehaviour): FakeImage => ({
  imageDigest: `sha256:${version.replace(/\D/g, '').padEnd(64, '0')}`,
  version,
  artifacts: {
    vmlinuz: new TextEncoder().encode(`kernel ${version}`),
    'rootfs.img': new TextEncoder().encode(`root ${version}`),
  },
  ...(lab === undefined ? {} : { lab }),
});

async function newMachine() {
  const clock = createFakeClock();
  const slots = new FakeSlotStore(() => new Date(clock.now()));
  const bootloader = createFakeBootloader();
  const images = createFakeImageSource(slots, {
    'reg/molt:1.1': image('1.1'),
    'reg/molt:1.2': image('1.2', { boot: 'ok', health: 'never' }),
  });
  slots.stage('A', { ...image('1.0'), imageRef: 'reg/molt:1.0' });
  await slots.install('A', 'install');
  await slots.markReady('A', 'install');
  const a = await slots.manifest('A');
  await bootloader.writeEntry('A', a!);
  await bootloader.commit('A');
  const m = {
    clock,
    slots,
    bootloader,
    images,
    journal: createMemoryJournalStore(),
    services: createFakeServices([]),
    mounts: createFakeMounts(),
    power: createFakePower(),
    holdStore: createMemoryHoldStore(),
    /** The hold as this boot's agent keeps it (loaded from `holdStore` at each boot). */
    holds: undefined as Holds | undefined,
    boots: 0,
    runner: undefined as Runner | undefined,
  };
  return m;
}
type Machine = Awaited<ReturnType<typeof newMachine>>;

/** Start an agent as after a boot (`slot` overrides what the firmware would pick). */
async function boot(
  m: Machine,
  options: { slot?: SlotId; sameBoot?: boolean; faults?: FaultPoints; kube?: KubeNode } = {},
): Promise<Runner> {
  m.runner?.close();
  if (options.sameBoot !== true) m.boots += 1;
  const firmware = m.bootloader.firmwareBoot();
  const slot = options.slot ?? firmware ?? 'A';
  m.power = createFakePower();
  m.holds = await loadHolds(m.holdStore, m.clock, 'node-1');
  const kube = options.kube ?? createNoClusterKubeNode();
  const runner = createRunner({
    journal: m.journal,
    ports: {
      bootloader: m.bootloader,
      slots: m.slots,
      images: m.images,
      services: m.services,
      mounts: m.mounts,
      kube,
      power: m.power,
      clock: m.clock,
      // As the agent composes them (compose.ts): outside a cluster the node check is skipped.
      health: [labSlotHealth(m.slots, slot), kubeNodeReady(kube)],
    },
    boot: { bootId: `boot-${m.boots}`, slot },
    faults: options.faults ?? { at: () => Promise.resolve() },
    holds: m.holds,
    controlPlane: false,
    healthDeadlineMs: 30_000,
    newOperationId: () => `op-${m.boots}-${Math.random().toString(36).slice(2, 8)}`,
    onFatal: (error) => {
      throw error;
    },
    tickMs: 5,
  });
  m.runner = runner;
  await runner.start();
  return runner;
}

/** `m` booted, with 1.1 staged (written, verified, not armed) and the runner settled. */
async function staged(m: Machine): Promise<{ runner: Runner; operationId: string }> {
  const runner = await boot(m);
  const { operationId } = await runner.submit({
    kind: 'upgrade',
    image: 'reg/molt:1.1',
    stage: true,
  });
  await runner.settled();
  return { runner, operationId };
}

/** Advance the fake clock until the machine asks for a reboot. */
async function untilReboot(m: Machine): Promise<void> {
  for (let i = 0; i < 2000 && m.power.reboots.length === 0; i += 1) {
    await new Promise((resolve) => setTimeout(resolve, 1));
    m.clock.advance(1000);
  }
  assert.ok(m.power.reboots.length > 0, 'the machine never asked for a reboot');
}

describe('runner', () => {
  it('upgrades a worker: pull, write B, boot once into B, health, commit', async () => {
    const m = await newMachine();
    const first = await boot(m);
    const { operationId } = await first.submit({ kind: 'upgrade', image: 'reg/molt:1.1' });
    await untilReboot(m);
    assert.equal(m.bootloader.oneShot, 'B');
    assert.equal(
      m.bootloader.committed,
      'A',
      'nothing is committed before the new slot proved healthy',
    );
    const second = await boot(m);
    await second.settled();
    assert.equal(second.state().phase, 'Idle');
    assert.equal(second.state().last?.result, 'Succeeded');
    assert.equal(m.bootloader.committed, 'B');
    assert.equal(
      (await m.slots.manifest('A'))?.status,
      'ready',
      'the previous slot stays as the rollback target',
    );
    const events = await m.journal.events(operationId);
    assert.equal(events.at(-1)?.kind, 'result');
    assert.ok(
      events.some((e) => e.message.includes('Cordon skipped: not in a Kubernetes cluster')),
    );
    second.close();
  });

  it('drains with the drain policy the upgrade request carried (a rollout’s, over the machine’s own)', async () => {
    const m = await newMachine();
    const drained: unknown[] = [];
    const kube: KubeNode = {
      ...createNoClusterKubeNode(),
      drain: (_operationId, override) => {
        drained.push(override);
        return Promise.resolve({ status: 'done' });
      },
    };
    const first = await boot(m, { kube });
    const drain = { timeoutSeconds: 42, onTimeout: 'quarantine-and-skip' as const };
    await first.submit({ kind: 'upgrade', image: 'reg/molt:1.1', drain });
    await untilReboot(m);
    assert.deepEqual(drained, [drain]);
    const second = await boot(m);
    await second.settled();
    assert.equal(second.state().last?.result, 'Succeeded');
    second.close();
  });

  it('rolls back by itself when the new slot is never healthy before the deadline', async () => {
    const m = await newMachine();
    const first = await boot(m);
    await first.submit({ kind: 'upgrade', image: 'reg/molt:1.2' });
    await untilReboot(m);
    await boot(m);
    await untilReboot(m); // the deadline passes: mark B bad, reboot
    assert.equal((await m.slots.manifest('B'))?.status, 'bad');
    const third = await boot(m);
    await third.settled();
    assert.equal(third.state().last?.result, 'RolledBack');
    assert.match(third.state().last?.reason ?? '', /HealthDeadline/);
    assert.equal(m.bootloader.committed, 'A');
    third.close();
  });

  it('records a boot failure when the firmware falls back to the previous slot', async () => {
    const m = await newMachine();
    await (await boot(m)).submit({ kind: 'upgrade', image: 'reg/molt:1.1' });
    await untilReboot(m);
    const after = await boot(m, { slot: 'A' });
    await after.settled();
    assert.equal(after.state().last?.result, 'RolledBack');
    assert.match(after.state().last?.reason ?? '', /BootFailed/);
    assert.equal((await m.slots.manifest('B'))?.status, 'bad');
    after.close();
  });

  it('answers a second request with busy and the running operation id', async () => {
    const m = await newMachine();
    const runner = await boot(m);
    const { operationId } = await runner.submit({ kind: 'upgrade', image: 'reg/molt:1.1' });
    await assert.rejects(runner.submit({ kind: 'reboot' }), (e: unknown) => {
      return isMoltError(e, 'MOLT_AGENT_BUSY') && e.details?.['operationId'] === operationId;
    });
    await untilReboot(m);
    runner.close();
  });

  it('refuses a manual rollback when the other slot holds no image, touching nothing', async () => {
    const m = await newMachine();
    const runner = await boot(m);
    await assert.rejects(runner.submit({ kind: 'rollback' }), (e: unknown) =>
      isMoltError(e, 'MOLT_NO_VALID_SLOT'),
    );
    assert.equal(runner.state().phase, 'Idle');
    assert.deepEqual(m.bootloader.calls, ['writeEntry A', 'commit A']);
    runner.close();
  });

  it('refuses an upgrade to the image slot A already runs before any disruption; force does it', async () => {
    const m = await newMachine();
    m.images.set('reg/molt:1.0-again', image('1.0'));
    const runner = await boot(m);
    await runner.submit({ kind: 'upgrade', image: 'reg/molt:1.0-again' });
    await runner.settled();
    assert.equal(runner.state().last?.result, 'Failed');
    assert.equal(runner.state().last?.code, 'MOLT_ALREADY_RUNNING');
    assert.equal(await m.slots.manifest('B'), undefined, 'slot B untouched');
    assert.ok(!m.services.calls.includes('stopAll'), 'no service stopped');
    assert.deepEqual(m.bootloader.calls, ['writeEntry A', 'commit A']);
    assert.equal(m.power.reboots.length, 0);
    await runner.submit({ kind: 'upgrade', image: 'reg/molt:1.0-again', force: true });
    await untilReboot(m);
    assert.equal((await m.slots.manifest('B'))?.version, '1.0', 'forced: B holds it too');
    runner.close();
  });

  it('aborts safely when EPHEMERAL is busy: services back, slot B untouched, error recorded', async () => {
    const m = await newMachine();
    m.mounts.busy = true;
    const runner = await boot(m);
    await runner.submit({ kind: 'upgrade', image: 'reg/molt:1.1' });
    await runner.settled();
    assert.equal(runner.state().phase, 'Idle');
    assert.equal(runner.state().last?.result, 'Failed');
    assert.equal(runner.state().last?.code, 'MOLT_MOUNT_BUSY');
    assert.equal(await m.slots.manifest('B'), undefined);
    assert.equal(m.bootloader.oneShot, null);
    assert.deepEqual(m.services.calls.slice(-1), ['startAll']);
    runner.close();
  });

  it('resumes after an agent crash in the same boot and finishes the upgrade', async () => {
    const m = await newMachine();
    const hang: FaultPoints = {
      at: (phase, when) =>
        phase === 'WritingSlot' && when === 'after'
          ? new Promise(() => undefined)
          : Promise.resolve(),
    };
    const first = await boot(m, { faults: hang });
    await first.submit({ kind: 'upgrade', image: 'reg/molt:1.1' });
    for (let i = 0; i < 200 && (await m.journal.load())?.state.phase !== 'WritingSlot'; i += 1)
      await new Promise((r) => setTimeout(r, 2));
    assert.equal((await m.journal.load())?.state.phase, 'WritingSlot');
    await boot(m, { sameBoot: true, slot: 'A' });
    await untilReboot(m);
    assert.equal(m.bootloader.oneShot, 'B');
    const after = await boot(m);
    await after.settled();
    assert.equal(after.state().last?.result, 'Succeeded');
    after.close();
  });

  it('stages an upgrade unarmed, keeps it across an unplanned reboot, and switches only at the reboot request', async () => {
    const m = await newMachine();
    const { runner, operationId } = await staged(m);
    assert.equal(runner.state().phase, 'Staged');
    assert.equal(m.bootloader.committed, 'A');
    assert.equal(m.bootloader.oneShot, null, 'nothing armed: a power cut keeps 1.0');
    assert.equal((await m.slots.manifest('B'))?.version, '1.1');
    assert.equal((await m.slots.manifest('B'))?.status, 'writing', 'no entry points at it yet');
    const unplanned = await boot(m);
    await unplanned.settled();
    assert.equal(unplanned.state().bootedSlot, 'A', 'the committed slot booted');
    assert.equal(unplanned.state().phase, 'Staged', 'and the staged upgrade still waits');
    assert.deepEqual(m.services.calls.slice(-1), ['startAll'], 'the node is back in service');
    const reboot = await unplanned.submit({ kind: 'reboot' });
    assert.equal(reboot.operationId, operationId, 'the reboot continues the staged operation');
    await untilReboot(m);
    assert.equal(m.bootloader.oneShot, 'B');
    const after = await boot(m);
    await after.settled();
    assert.equal(after.state().last?.result, 'Succeeded');
    assert.equal(m.bootloader.committed, 'B');
    after.close();
  });

  it('refuses to apply a staged slot whose bytes changed since it was staged, disrupting nothing', async () => {
    const m = await newMachine();
    const { runner } = await staged(m);
    m.slots.corrupt('B', 'rootfs.img');
    const stopsBefore = m.services.calls.filter((c) => c === 'stopAll').length;
    await runner.submit({ kind: 'reboot' });
    await runner.settled();
    assert.equal(runner.state().phase, 'Idle');
    assert.equal(runner.state().last?.code, 'MOLT_SLOT_VERIFY_FAILED');
    assert.equal(m.power.reboots.length, 0);
    assert.equal(m.bootloader.oneShot, null);
    assert.equal(m.services.calls.filter((c) => c === 'stopAll').length, stopsBefore);
    runner.close();
  });

  it('applies a staged upgrade only when asked for by its operation id; anything else is refused, changing nothing', async () => {
    const m = await newMachine();
    const runner = await boot(m);
    await assert.rejects(runner.submit({ kind: 'reboot', apply: 'op-1' }), {
      code: 'MOLT_NOT_STAGED',
      message: /staged operation op-1 cannot be applied: nothing is staged/,
    });
    assert.equal(runner.state().phase, 'Idle', 'no plain reboot instead');
    const { operationId } = await runner.submit({
      kind: 'upgrade',
      image: 'reg/molt:1.1',
      stage: true,
    });
    await runner.settled();
    await assert.rejects(runner.submit({ kind: 'reboot', apply: 'op-other' }), {
      code: 'MOLT_NOT_STAGED',
    });
    assert.throws(() => runner.cancel('alice', 'op-other'), { code: 'MOLT_NOT_CANCELLABLE' });
    assert.equal(runner.state().phase, 'Staged');
    assert.deepEqual(await runner.submit({ kind: 'reboot', apply: operationId }), { operationId });
    await untilReboot(m);
    assert.equal(m.bootloader.oneShot, 'B');
    runner.close();
  });

  it('discards a staged upgrade on cancel: Failed MOLT_CANCELLED by the caller, the booted slot untouched', async () => {
    const m = await newMachine();
    const { runner, operationId } = await staged(m);
    assert.deepEqual(runner.cancel('alice'), { operationId });
    await runner.settled();
    assert.equal(runner.state().phase, 'Idle');
    assert.deepEqual(
      [runner.state().last?.result, runner.state().last?.code, runner.state().last?.reason],
      ['Failed', 'MOLT_CANCELLED', 'the staged upgrade to 1.1 was discarded by alice'],
    );
    assert.equal(m.bootloader.committed, 'A');
    assert.equal(m.bootloader.oneShot, null);
    assert.throws(() => runner.cancel('alice'), { code: 'MOLT_NOT_CANCELLABLE' });
    runner.close();
  });

  it('finishes a clean-up cut short by a crash in Idle (same boot)', async () => {
    const m = await newMachine();
    m.boots = 1;
    const last = {
      operationId: 'op-x',
      kind: 'upgrade' as const,
      result: 'Failed' as const,
      code: 'MOLT_MOUNT_BUSY',
      finishedAt: m.clock.now(),
    };
    await m.journal.save({
      rev: 9,
      state: { phase: 'Idle', undo: [], bootId: 'boot-1', bootedSlot: 'A', last },
      commands: [{ type: 'StartServices' }],
    });
    const runner = await boot(m, { sameBoot: true, slot: 'A' });
    await runner.settled();
    assert.deepEqual(m.services.calls, ['startAll']);
    runner.close();
  });

  it('logs the result of an operation whose end was persisted just before a crash', async () => {
    const m = await newMachine();
    m.boots = 1;
    await m.journal.append({
      operationId: 'op-y',
      time: new Date(m.clock.now()).toISOString(),
      kind: 'phase',
      phase: 'Aborting',
      status: 'started',
      message: 'Aborting',
    });
    const last = {
      operationId: 'op-y',
      kind: 'upgrade' as const,
      result: 'Failed' as const,
      code: 'MOLT_MOUNT_BUSY',
      reason: 'EPHEMERAL is busy',
      finishedAt: m.clock.now(),
    };
    await m.journal.save({
      rev: 3,
      state: { phase: 'Idle', undo: [], bootId: 'boot-1', bootedSlot: 'A', last },
      commands: [],
    });
    const runner = await boot(m, { sameBoot: true, slot: 'A' });
    await runner.settled();
    const events = await m.journal.events('op-y');
    assert.deepEqual(events.at(-1)?.result, { result: 'Failed', reason: 'EPHEMERAL is busy' });
    runner.close();
  });
});

describe('runner on a held machine', () => {
  const hold = (m: Machine, duration = '1h') =>
    m.holds!.set({ reason: 'disk swap', for: duration }, { name: 'alice', role: 'operator' });

  it('refuses an upgrade with MOLT_MACHINE_HELD before anything is persisted, naming the reason and the end', async () => {
    const m = await newMachine();
    const runner = await boot(m);
    await hold(m);
    const saves = m.journal.saves.length;
    await assert.rejects(runner.submit({ kind: 'upgrade', image: 'reg/molt:1.1' }), (e) => {
      assert.ok(isMoltError(e, 'MOLT_MACHINE_HELD'), String(e));
      assert.equal(e.message, 'node-1 is held until 2026-11-22T13:00:00.000Z by alice: disk swap');
      assert.match(e.hint ?? '', /molt node release/);
      assert.match(e.hint ?? '', /admin can force/);
      return true;
    });
    await runner.settled();
    assert.equal(m.journal.saves.length, saves, 'no operation was persisted');
    assert.equal(runner.state().phase, 'Idle');
    assert.equal(runner.state().op, undefined);
    assert.equal(await m.slots.manifest('B'), undefined, 'slot B untouched');
    assert.deepEqual(m.bootloader.calls, ['writeEntry A', 'commit A']);
    assert.ok(!m.services.calls.includes('stopAll'), 'no service stopped');
    runner.close();
  });

  it('lets a forced upgrade (only an admin may force) through the hold', async () => {
    const m = await newMachine();
    const runner = await boot(m);
    await hold(m);
    await runner.submit({ kind: 'upgrade', image: 'reg/molt:1.1', force: true });
    await untilReboot(m);
    assert.equal((await m.slots.manifest('B'))?.version, '1.1');
    assert.equal(m.bootloader.oneShot, 'B');
    runner.close();
  });

  it('refuses nothing once the hold has ended', async () => {
    const m = await newMachine();
    const runner = await boot(m);
    await hold(m, '1h');
    m.clock.advance(3_600_000);
    await runner.submit({ kind: 'upgrade', image: 'reg/molt:1.1' });
    await untilReboot(m);
    assert.equal((await m.slots.manifest('B'))?.version, '1.1');
    runner.close();
  });

  it('never refuses a rollback or a reboot: a hold does not stand in the way of recovery', async () => {
    const m = await newMachine();
    await (await boot(m)).submit({ kind: 'upgrade', image: 'reg/molt:1.1' });
    await untilReboot(m);
    const upgraded = await boot(m);
    await upgraded.settled();
    assert.equal(upgraded.state().last?.result, 'Succeeded');
    await hold(m);
    await upgraded.submit({ kind: 'rollback' });
    await untilReboot(m);
    const rolledBack = await boot(m);
    await rolledBack.settled();
    assert.equal(rolledBack.state().last?.result, 'RolledBack');
    assert.equal(m.bootloader.committed, 'A');
    assert.ok(m.holds?.current() !== null, 'still held');
    await rolledBack.submit({ kind: 'reboot' });
    await untilReboot(m);
    rolledBack.close();
  });

  it('refuses the reboot that would apply a staged upgrade, and lets the staged upgrade be discarded', async () => {
    const m = await newMachine();
    const { runner, operationId } = await staged(m);
    await hold(m);
    await assert.rejects(runner.submit({ kind: 'reboot' }), (e) =>
      isMoltError(e, 'MOLT_MACHINE_HELD'),
    );
    assert.equal(runner.state().phase, 'Staged');
    assert.equal(m.power.reboots.length, 0);
    assert.deepEqual(runner.cancel('alice'), { operationId });
    await runner.settled();
    assert.equal(runner.state().phase, 'Idle');
    await runner.submit({ kind: 'reboot' });
    await untilReboot(m);
    assert.equal(m.bootloader.oneShot, null, 'a plain reboot of the held machine, nothing applied');
    runner.close();
  });

  it('keeps the hold across an agent restart: the next agent refuses the upgrade too', async () => {
    const m = await newMachine();
    await boot(m);
    const held = await hold(m);
    const restarted = await boot(m);
    assert.deepEqual(m.holds?.current(), held);
    await assert.rejects(restarted.submit({ kind: 'upgrade', image: 'reg/molt:1.1' }), (e) =>
      isMoltError(e, 'MOLT_MACHINE_HELD'),
    );
    await m.holds.clear();
    await restarted.submit({ kind: 'upgrade', image: 'reg/molt:1.1' });
    await untilReboot(m);
    restarted.close();
  });
});

/**
 * The machine's Node as the agent changes it, with the drainer's rule (uncordon undoes only molt's
 * own cordon), and a kubelet that starts on the slots `kubeletStarts` names. One object across
 * boots, as the Node outlives them; `on(slot)` is the agent's view of it in one boot.
 */
function fakeNode(kubeletStarts: (slot: SlotId) => boolean) {
  const node = { cordonedBy: undefined as string | undefined, calls: [] as string[] };
  const on = (slot: SlotId): KubeNode => ({
    cordon(operationId) {
      node.calls.push('cordon');
      if (node.cordonedBy !== undefined)
        return Promise.resolve({ status: 'skipped', reason: 'already cordoned' });
      node.cordonedBy = operationId;
      return Promise.resolve({ status: 'done' });
    },
    drain() {
      node.calls.push('drain');
      return Promise.resolve({ status: 'done' });
    },
    uncordon() {
      node.calls.push('uncordon');
      if (node.cordonedBy === undefined)
        return Promise.resolve({ status: 'skipped', reason: 'molt did not cordon it' });
      node.cordonedBy = undefined;
      return Promise.resolve({ status: 'done' });
    },
    ready() {
      return kubeletStarts(slot)
        ? Promise.resolve({ status: 'done' })
        : Promise.reject(new Error("node node-1's kubelet has not reported since this boot"));
    },
  });
  return { node, on };
}

describe('runner on a Kubernetes node: never left cordoned', () => {
  it('a release whose kubelet never starts rolls back at the deadline and uncordons the node', async () => {
    const m = await newMachine();
    const { node, on } = fakeNode((slot) => slot === 'A');
    await (await boot(m, { kube: on('A') })).submit({ kind: 'upgrade', image: 'reg/molt:1.1' });
    await untilReboot(m);
    assert.notEqual(node.cordonedBy, undefined, 'cordoned for the reboot');
    await boot(m, { kube: on('B') });
    await untilReboot(m); // kube-node-ready fails until the deadline: mark B bad, reboot
    assert.match(
      (await m.slots.manifest('B'))?.badReason ?? '',
      /kube-node-ready \(node node-1's kubelet has not reported since this boot\)/,
    );
    assert.notEqual(node.cordonedBy, undefined, 'still cordoned while B is on trial');
    const back = await boot(m, { kube: on('A') });
    await back.settled();
    assert.equal(back.state().last?.result, 'RolledBack');
    assert.equal(back.state().last?.reason, 'HealthDeadline');
    assert.equal(m.bootloader.committed, 'A');
    assert.equal(node.cordonedBy, undefined, 'uncordoned on the previous slot');
    assert.deepEqual(node.calls, ['cordon', 'drain', 'uncordon']);
    back.close();
  });

  it('a release that does not boot (the firmware falls back) uncordons the node', async () => {
    const m = await newMachine();
    const { node, on } = fakeNode(() => true);
    await (await boot(m, { kube: on('A') })).submit({ kind: 'upgrade', image: 'reg/molt:1.1' });
    await untilReboot(m);
    const after = await boot(m, { slot: 'A', kube: on('A') });
    await after.settled();
    assert.equal(after.state().last?.reason, 'BootFailed');
    assert.equal(node.cordonedBy, undefined);
    assert.deepEqual(node.calls, ['cordon', 'drain', 'uncordon']);
    after.close();
  });

  it('a manual rollback cordons, reboots into the previous slot and uncordons', async () => {
    const m = await newMachine();
    const { node, on } = fakeNode(() => true);
    await (await boot(m, { kube: on('A') })).submit({ kind: 'upgrade', image: 'reg/molt:1.1' });
    await untilReboot(m);
    const upgraded = await boot(m, { kube: on('B') });
    await upgraded.settled();
    assert.equal(upgraded.state().last?.result, 'Succeeded');
    assert.equal(node.cordonedBy, undefined);
    await upgraded.submit({ kind: 'rollback' });
    await untilReboot(m);
    assert.notEqual(node.cordonedBy, undefined, 'cordoned for the rollback reboot');
    const rolledBack = await boot(m, { kube: on('A') });
    await rolledBack.settled();
    assert.equal(rolledBack.state().last?.result, 'RolledBack');
    assert.equal(m.bootloader.committed, 'A');
    assert.equal(node.cordonedBy, undefined, 'uncordoned after the rollback');
    assert.deepEqual(node.calls, ['cordon', 'drain', 'uncordon', 'cordon', 'drain', 'uncordon']);
    rolledBack.close();
  });
});
