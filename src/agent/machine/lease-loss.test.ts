// SPDX-License-Identifier: Apache-2.0
// A control-plane machine on fakes whose upgrade lease is lost mid-operation (etcd out of reach for
// a TTL): the loss is journalled, a free key is taken again, and a key another machine took
// stops the upgrade before the reboot, leaving the machine on its old slot.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { SlotId } from '../../core/slots/slot.ts';
import { labSlotHealth } from '../adapters/lab/slot-health.ts';
import { createNoClusterKubeNode } from '../adapters/no-cluster/index.ts';
import { createFakeBootloader } from '../ports/bootloader.fake.ts';
import { createFakeClock } from '../ports/clock.fake.ts';
import {
  createFakeClusterLease,
  createFakeLeaseBackend,
  type FakeLeaseBackend,
} from '../ports/cluster-lease.fake.ts';
import { createFakeEtcdCluster, createFakeEtcdMember } from '../ports/etcd-member.fake.ts';
import { createFakeImageSource } from '../ports/image-source.fake.ts';
import { createMemoryJournalStore } from '../ports/journal-store.fake.ts';
import { createFakeMounts } from '../ports/mounts.fake.ts';
import { createFakePower } from '../ports/power.fake.ts';
import { createFakeServices } from '../ports/services.fake.ts';
import { FakeSlotStore } from '../ports/slot-store.fake.ts';
import type { FaultPoints } from './ports.ts';
import { createRunner, type Runner } from './runner.ts';

const image = (version: string) => ({
  imageDigest: `sha256:${version.replace(/\D/g, '').padEnd(64, '0')}`,
  version,
  artifacts: {
    vmlinuz: new TextEncoder().encode(`kernel ${version}`),
    'rootfs.img': new TextEncoder().encode(`root ${version}`),
  },
});

async function controlPlaneMachine() {
  const clock = createFakeClock();
  const slots = new FakeSlotStore(() => new Date(clock.now()));
  const bootloader = createFakeBootloader();
  slots.stage('A', { ...image('1.0'), imageRef: 'reg/molt:1.0' });
  await slots.install('A', 'install');
  await slots.markReady('A', 'install');
  await bootloader.writeEntry('A', (await slots.manifest('A'))!);
  await bootloader.commit('A');
  const etcd = createFakeEtcdCluster(['cp-a', 'cp-b', 'cp-c']);
  const backend = createFakeLeaseBackend();
  return {
    clock,
    slots,
    bootloader,
    images: createFakeImageSource(slots, { 'reg/molt:1.1': image('1.1') }),
    journal: createMemoryJournalStore(),
    services: createFakeServices([]),
    mounts: createFakeMounts(),
    etcd,
    backend,
    boots: 0,
    power: createFakePower(),
  };
}
type Machine = Awaited<ReturnType<typeof controlPlaneMachine>>;

function boot(m: Machine, slot: SlotId, faults: FaultPoints): Runner {
  m.boots += 1;
  m.power = createFakePower();
  return createRunner({
    journal: m.journal,
    ports: {
      bootloader: m.bootloader,
      slots: m.slots,
      images: m.images,
      services: m.services,
      mounts: m.mounts,
      kube: createNoClusterKubeNode(),
      power: m.power,
      clock: m.clock,
      health: [labSlotHealth(m.slots, slot)],
      etcd: createFakeEtcdMember(m.etcd, 'cp-a'),
      lease: createFakeClusterLease(m.backend, 'cp-a'),
    },
    boot: { bootId: `boot-${m.boots}`, slot },
    faults,
    holds: { check: () => undefined },
    controlPlane: true,
    healthDeadlineMs: 30_000,
    newOperationId: () => `op-${m.boots}`,
    onFatal: (error) => {
      throw error;
    },
    tickMs: 5,
  });
}

/** Lose the lease just before the slot is written (to `takenBy`, a machine that was waiting). */
function loseBeforeWriting(
  backend: FakeLeaseBackend,
  takenBy?: { holder: string; operationId: string },
): FaultPoints {
  return {
    at: async (phase, when) => {
      if (phase !== 'WritingSlot' || when !== 'before') return;
      backend.loseKey(takenBy);
      await new Promise((resolve) => setTimeout(resolve, 5)); // the runner's loss handler runs
    },
  };
}

async function messages(m: Machine, operationId: string): Promise<string[]> {
  return (await m.journal.events(operationId)).map((e) => e.message);
}

describe('runner: a lost control-plane upgrade lease', () => {
  it('journals the loss, takes the free key again and finishes holding it', async () => {
    const m = await controlPlaneMachine();
    const runner = boot(m, 'A', loseBeforeWriting(m.backend));
    await runner.start();
    const { operationId } = await runner.submit({ kind: 'upgrade', image: 'reg/molt:1.1' });
    for (let i = 0; i < 500 && m.power.reboots.length === 0; i += 1)
      await new Promise((resolve) => setTimeout(resolve, 2));
    assert.equal(m.power.reboots.length, 1, 'the upgrade went on to its reboot');
    assert.equal(m.backend.current()?.operationId, operationId, 'held through the reboot');
    const log = await messages(m, operationId);
    assert.ok(
      log.some((s) => s.includes('expired while held')),
      log.join('\n'),
    );
    assert.ok(
      log.some((s) => s.includes('taken again')),
      log.join('\n'),
    );
    runner.close();
    const after = boot(m, m.bootloader.firmwareBoot() ?? 'A', { at: () => Promise.resolve() });
    await after.start();
    await after.settled();
    assert.equal(after.state().last?.result, 'Succeeded');
    assert.equal(m.backend.current(), undefined, 'released once healthy');
    after.close();
  });

  it('stops before the reboot when another machine took the key, leaving the old slot committed', async () => {
    const m = await controlPlaneMachine();
    const takenBy = { holder: 'cp-b', operationId: 'op-cp-b' };
    const runner = boot(m, 'A', loseBeforeWriting(m.backend, takenBy));
    await runner.start();
    const { operationId } = await runner.submit({ kind: 'upgrade', image: 'reg/molt:1.1' });
    await runner.settled();
    assert.equal(m.power.reboots.length, 0, 'never rebooted without the lease');
    assert.equal(runner.state().last?.result, 'Failed');
    assert.equal(runner.state().last?.code, 'MOLT_LEASE_HELD');
    assert.equal(m.bootloader.committed, 'A');
    assert.equal(m.bootloader.oneShot, null);
    assert.equal(m.backend.current()?.holder, 'cp-b', "the other machine's key is left alone");
    const log = await messages(m, operationId);
    assert.ok(
      log.some((s) => s.includes('held by cp-b')),
      log.join('\n'),
    );
    runner.close();
  });
});
