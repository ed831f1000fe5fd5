// SPDX-License-Identifier: Apache-2.0
// Issue 14 defect 2: a pull that never ends can be cancelled, and ends by itself at the pull
// deadline; either way the operation ends Failed with its own code, the staging is discarded and
// the machine is as before. Past the pull a cancel is refused.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ErrorCode, isMoltError } from '../../core/errors.ts';
import { createNoClusterKubeNode } from '../adapters/no-cluster/index.ts';
import { createFakeBootloader } from '../ports/bootloader.fake.ts';
import { createFakeClock, type FakeClock } from '../ports/clock.fake.ts';
import { createFakeImageSource, HangingImage } from '../ports/image-source.fake.ts';
import { createMemoryJournalStore } from '../ports/journal-store.fake.ts';
import { createFakeMounts } from '../ports/mounts.fake.ts';
import { createFakePower } from '../ports/power.fake.ts';
import { createFakeServices } from '../ports/services.fake.ts';
import { FakeSlotStore } from '../ports/slot-store.fake.ts';
import { createRunner, type Runner } from './runner.ts';

const text = (s: string): Uint8Array => new TextEncoder().encode(s);

async function machine(): Promise<{
  runner: Runner;
  clock: FakeClock;
  slots: FakeSlotStore;
  journal: ReturnType<typeof createMemoryJournalStore>;
}> {
  const clock = createFakeClock();
  const slots = new FakeSlotStore(() => new Date(clock.now()));
  const bootloader = createFakeBootloader();
  const artifacts = { vmlinuz: text('kernel'), 'rootfs.img': text('root') };
  slots.stage('A', {
    imageDigest: `sha256:${'1'.repeat(64)}`,
    version: '1.0',
    artifacts,
    imageRef: 'reg/molt:1.0',
  });
  await slots.install('A', 'install');
  await bootloader.writeEntry('A', (await slots.manifest('A'))!);
  await bootloader.commit('A');
  const journal = createMemoryJournalStore();
  const runner = createRunner({
    journal,
    ports: {
      bootloader,
      slots,
      images: createFakeImageSource(slots, { 'reg/molt:stuck': HangingImage }),
      services: createFakeServices([]),
      mounts: createFakeMounts(),
      kube: createNoClusterKubeNode(),
      power: createFakePower(),
      clock,
      health: [],
    },
    boot: { bootId: 'boot-1', slot: 'A' },
    faults: { at: () => Promise.resolve() },
    holds: { check: () => undefined },
    controlPlane: false,
    healthDeadlineMs: 30_000,
    pullTimeoutMs: 60_000,
    newOperationId: () => 'op-1',
    onFatal: (error) => {
      throw error;
    },
    tickMs: 5,
  });
  await runner.start();
  return { runner, clock, slots, journal };
}

async function settle(runner: Runner): Promise<void> {
  for (let i = 0; i < 200 && runner.state().phase !== 'Idle'; i++)
    await new Promise((resolve) => setTimeout(resolve, 2));
  await runner.settled();
}

describe('cancelling a pull', () => {
  it('stops a pull that never ends; the operation ends Failed MOLT_CANCELLED, nothing changed', async () => {
    const m = await machine();
    const before = await m.slots.manifest('B');
    const { operationId } = await m.runner.submit({ kind: 'upgrade', image: 'reg/molt:stuck' });
    await new Promise((resolve) => setTimeout(resolve, 10));
    assert.equal(m.runner.state().phase, 'Pulling');
    assert.deepEqual(m.runner.cancel('operator alice'), { operationId });
    await settle(m.runner);
    const state = m.runner.state();
    assert.equal(state.phase, 'Idle');
    assert.equal(state.last?.result, 'Failed');
    assert.equal(state.last.code, ErrorCode.Cancelled);
    assert.deepEqual(await m.slots.manifest('B'), before, 'slot B untouched');
    const result = (await m.journal.events(operationId)).find((e) => e.kind === 'result');
    assert.equal(result?.error?.code, ErrorCode.Cancelled);
    assert.match(result.message, /cancelled by operator alice/);
  });

  it('ends a pull at the pull deadline with MOLT_PULL_DEADLINE', async () => {
    const m = await machine();
    await m.runner.submit({ kind: 'upgrade', image: 'reg/molt:stuck' });
    await new Promise((resolve) => setTimeout(resolve, 10));
    m.clock.advance(60_000);
    await settle(m.runner);
    assert.equal(m.runner.state().last?.code, ErrorCode.PullDeadline);
  });

  it('refuses a cancel when nothing runs', async () => {
    const m = await machine();
    assert.throws(
      () => m.runner.cancel('operator alice'),
      (e: unknown) => isMoltError(e, ErrorCode.NotCancellable),
    );
  });
});
