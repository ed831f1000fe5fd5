// SPDX-License-Identifier: Apache-2.0
/**
 * The history's head and the notification sinks' cursors in the operator store conformance suite
 * (`operator-store-conformance.ts`; docs/adr/0009).
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { ErrorCode } from '../core/errors.ts';
import type { OperatorStore } from '../operator/ports/store.ts';
import { fresh, nth } from './operator-store-fixtures.ts';
import { rejectsWithCode } from './registry-conformance.ts';

export function notifyCursorConformance(
  storeOf: () => OperatorStore,
  open: () => OperatorStore,
): void {
  it('says the seq of the last history event as the head', async () => {
    const store = storeOf();
    const before = await store.historyHead();
    assert.equal(before, (await store.history()).at(-1)?.seq ?? 0);
    const e = await store.appendHistory({ at: 1, kind: 'warning', message: 'head' });
    assert.equal(await store.historyHead(), e.seq);
    assert.ok(e.seq > before);
  });

  it('keeps a cursor per notification sink, moved forward only, for a new instance too', async () => {
    const store = storeOf();
    const [a, b] = [fresh('sink'), fresh('sink/with space')];
    assert.equal(await store.notifyCursor(a), undefined);
    await store.advanceNotifyCursor(a, 5);
    await store.advanceNotifyCursor(a, 3); // a deposed leader's late write: ignored
    assert.equal(await store.notifyCursor(a), 5);
    await store.advanceNotifyCursor(b, 0);
    assert.equal(await store.notifyCursor(b), 0);
    await store.advanceNotifyCursor(a, 9);
    assert.equal(await open().notifyCursor(a), 9);
    assert.equal(await open().notifyCursor(b), 0);
    for (const bad of [-1, 1.5, Number.NaN])
      await rejectsWithCode(store.advanceNotifyCursor(a, bad), ErrorCode.BadInput);
    assert.equal(await store.notifyCursor(a), 9);
  });

  it('leaves the highest cursor when operators advance it at once', async () => {
    const sink = fresh('sink');
    const writers = [storeOf(), open(), open()];
    await Promise.all(
      [4, 12, 7, 11, 3, 12, 10].map((seq, i) =>
        nth(writers, i % writers.length).advanceNotifyCursor(sink, seq),
      ),
    );
    assert.equal(await storeOf().notifyCursor(sink), 12);
  });
}
