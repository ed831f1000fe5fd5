// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { settleWithin } from './settle-within.ts';

const late = (): Error => new Error('late');

describe('a call that must settle in time', () => {
  it('answers what the call gives in time, and its error', async () => {
    assert.equal(await settleWithin(Promise.resolve(7), 1000, late), 7);
    await assert.rejects(settleWithin(Promise.reject(new Error('refused')), 1000, late), /refused/);
  });

  it('gives up on a call that never settles, with the caller’s error', async () => {
    const t0 = performance.now();
    await assert.rejects(
      settleWithin(new Promise<never>(() => undefined), 50, late),
      /^Error: late$/,
    );
    assert.ok(performance.now() - t0 < 1000);
  });

  it('hands a value that comes after giving up to discard (a stream is ended, not leaked)', async () => {
    const discarded: string[] = [];
    const slow = sleep(80).then(() => 'stream');
    await assert.rejects(
      settleWithin(slow, 20, late, (v) => discarded.push(v)),
      /late/,
    );
    await slow;
    await sleep(0);
    assert.deepEqual(discarded, ['stream']);
  });
});
