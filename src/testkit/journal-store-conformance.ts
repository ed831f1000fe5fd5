// SPDX-License-Identifier: Apache-2.0
/** What every {@link JournalStore} must do; run against the fake and the file adapter. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { JournalStore, NewAgentEvent } from '../agent/ports/journal-store.ts';
import type { AgentEvent } from '../protocol/agent.ts';

function event(operationId: string, phase: string, time: string): NewAgentEvent {
  return {
    operationId,
    time,
    kind: 'phase',
    phase,
    status: 'started',
    message: `${phase} started`,
  };
}

export function journalStoreConformance(name: string, create: () => Promise<JournalStore>): void {
  describe(`JournalStore conformance: ${name}`, () => {
    it('starts empty and returns the last saved record', async () => {
      const store = await create();
      assert.equal(await store.load(), undefined);
      const record = {
        rev: 1,
        state: { phase: 'Pulling' as const, undo: [] },
        commands: [{ type: 'Reboot' as const }],
      };
      await store.save(record);
      await store.save({ ...record, rev: 2 });
      assert.deepEqual(await store.load(), { ...record, rev: 2 });
    });

    it('numbers events per operation from 1 and filters by seq', async () => {
      const store = await create();
      const a1 = await store.append(event('op-a', 'Pulling', '2026-01-01T00:00:01Z'));
      await store.append(event('op-b', 'Pulling', '2026-01-01T00:00:02Z'));
      const a2 = await store.append(event('op-a', 'Cordoning', '2026-01-01T00:00:03Z'));
      assert.deepEqual([a1.seq, a2.seq], [1, 2]);
      assert.deepEqual(
        (await store.events('op-a', 1)).map((e) => e.phase),
        ['Cordoning'],
      );
      assert.deepEqual(
        (await store.events()).map((e) => `${e.operationId}:${e.seq}`),
        ['op-a:1', 'op-b:1', 'op-a:2'],
      );
    });

    it('notifies subscribers until they unsubscribe', async () => {
      const store = await create();
      const seen: AgentEvent[] = [];
      const unsubscribe = store.subscribe((e) => seen.push(e));
      await store.append(event('op-c', 'Pulling', '2026-01-01T00:00:01Z'));
      unsubscribe();
      await store.append(event('op-c', 'Cordoning', '2026-01-01T00:00:02Z'));
      assert.deepEqual(
        seen.map((e) => e.phase),
        ['Pulling'],
      );
    });

    it('summarises operations with their result', async () => {
      const store = await create();
      await store.append(event('op-d', 'Pulling', '2026-01-01T00:00:01Z'));
      await store.append({
        ...event('op-d', 'Idle', '2026-01-01T00:00:05Z'),
        kind: 'result',
        status: 'done',
        result: { result: 'RolledBack', reason: 'HealthDeadline' },
      });
      const [summary] = await store.operations();
      assert.equal(summary?.operationId, 'op-d');
      assert.equal(summary.events, 2);
      assert.deepEqual(summary.result, { result: 'RolledBack', reason: 'HealthDeadline' });
    });
  });
}
