// SPDX-License-Identifier: Apache-2.0
// Progress events are journalled at a bounded rate whatever the stream does (a
// registry streaming past the declared total once switched the throttle off, 4, 671 events).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { UpgradeState } from '../../core/upgrade/state.ts';
import { createFakeClock } from '../ports/clock.fake.ts';
import { createMemoryJournalStore } from '../ports/journal-store.fake.ts';
import { createEventLog, MaxProgressEvents } from './events.ts';

const pulling = (id: string): UpgradeState => ({
  phase: 'Pulling',
  undo: [],
  op: {
    id,
    kind: 'upgrade',
    image: 'registry.test/acme/installer:1',
    preserve: true,
    stage: false,
    force: false,
    controlPlane: false,
    healthDeadlineMs: 300_000,
    target: 'B',
    previous: 'A',
    startedAt: 0,
  },
});

async function progressEvents(
  journal: ReturnType<typeof createMemoryJournalStore>,
  id: string,
): Promise<number> {
  await new Promise((resolve) => setImmediate(resolve));
  return (await journal.events(id)).filter((e) => e.kind === 'progress').length;
}

describe('progress events', () => {
  it('stay throttled when a stream runs past its declared total', async () => {
    const journal = createMemoryJournalStore();
    const clock = createFakeClock();
    const log = createEventLog(journal, clock);
    const state = pulling('op-1');
    // 10,000 chunks in 5 s, every one past the 4,096 bytes the descriptor declared.
    for (let i = 1; i <= 10_000; i++) {
      log.progress(state, { bytes: 4096 + i * 1024, total: 4096 });
      if (i % 2000 === 0) clock.advance(1000);
    }
    const count = await progressEvents(journal, 'op-1');
    assert.ok(count <= 6, `${count} progress events for 5 s of streaming`);
  });

  it('journal the completion once, and at most a bounded number per operation', async () => {
    const journal = createMemoryJournalStore();
    const clock = createFakeClock();
    const log = createEventLog(journal, clock);
    const state = pulling('op-2');
    log.progress(state, { bytes: 10, total: 100 });
    log.progress(state, { bytes: 100, total: 100 });
    assert.equal(await progressEvents(journal, 'op-2'), 2, 'the completion is not throttled away');
    // Three hours of a stalled-but-alive registry, one chunk a second.
    for (let s = 0; s < 3 * 3600; s++) {
      clock.advance(1000);
      log.progress(state, { bytes: 100 + s, total: 100 });
    }
    const count = await progressEvents(journal, 'op-2');
    assert.ok(count <= MaxProgressEvents + 3 * 60, `${count} progress events in 3 h`);
    // A new operation starts with a fresh allowance.
    log.progress(pulling('op-3'), { bytes: 1, total: 100 });
    assert.equal(await progressEvents(journal, 'op-3'), 1);
  });
});
