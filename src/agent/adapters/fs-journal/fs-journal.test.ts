// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { appendFile, readFile, writeFile, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { isMoltError } from '../../../core/errors.ts';
import { scratchDir } from '../../../testkit/scratch-dir.ts';
import { journalStoreConformance } from '../../../testkit/journal-store-conformance.ts';
import { createMemoryJournalStore } from '../../ports/journal-store.fake.ts';
import { createFsJournalStore } from './index.ts';

journalStoreConformance('memory fake', () => Promise.resolve(createMemoryJournalStore()));
journalStoreConformance('file', async () => createFsJournalStore(await scratchDir('journal')));

describe('file journal store', () => {
  const time = '2026-01-01T00:00:00Z';
  it('keeps events across store instances (reboots) and continues the numbering', async () => {
    const root = await scratchDir('journal');
    await createFsJournalStore(root).append({
      operationId: 'op1',
      time,
      kind: 'phase',
      phase: 'Pulling',
      status: 'started',
      message: 'm',
    });
    const reopened = createFsJournalStore(root);
    const next = await reopened.append({
      operationId: 'op1',
      time,
      kind: 'phase',
      phase: 'Rebooting',
      status: 'started',
      message: 'm',
    });
    assert.equal(next.seq, 2);
    assert.deepEqual(
      (await reopened.events('op1')).map((e) => e.phase),
      ['Pulling', 'Rebooting'],
    );
  });

  it('skips a line torn by a power cut', async () => {
    const root = await scratchDir('journal');
    const store = createFsJournalStore(root);
    await store.append({
      operationId: 'op2',
      time,
      kind: 'phase',
      phase: 'Pulling',
      status: 'started',
      message: 'm',
    });
    await appendFile(join(root, 'state/journal/ops/op2.jsonl'), '{"operationId":"op2","se');
    assert.equal((await createFsJournalStore(root).events('op2')).length, 1);
  });

  it('reports an unreadable record with a stable code instead of starting over silently', async () => {
    const root = await scratchDir('journal');
    await mkdir(join(root, 'state/journal'), { recursive: true });
    await writeFile(join(root, 'state/journal/current.json'), '{"rev":');
    await assert.rejects(createFsJournalStore(root).load(), (e: unknown) =>
      isMoltError(e, 'MOLT_MACHINE_INVALID'),
    );
  });

  it('refuses operation ids that would escape the journal directory', async () => {
    const store = createFsJournalStore(await scratchDir('journal'));
    await assert.rejects(
      store.append({
        operationId: '../x',
        time,
        kind: 'log',
        phase: 'Idle',
        status: 'info',
        message: 'm',
      }),
      (e: unknown) => isMoltError(e, 'MOLT_BAD_INPUT'),
    );
  });

  it('writes the record atomically as readable JSON', async () => {
    const root = await scratchDir('journal');
    await createFsJournalStore(root).save({
      rev: 7,
      state: { phase: 'Idle', undo: [] },
      commands: [],
    });
    assert.equal(
      (
        JSON.parse(await readFile(join(root, 'state/journal/current.json'), 'utf8')) as {
          rev: number;
        }
      ).rev,
      7,
    );
  });
});
