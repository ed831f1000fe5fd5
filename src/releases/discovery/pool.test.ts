// SPDX-License-Identifier: Apache-2.0
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { mapConcurrent } from './pool.ts';

const tick = (): Promise<void> => new Promise((r) => setImmediate(r));

describe('mapConcurrent', () => {
  it('keeps input order and never exceeds the limit', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.nat(3), { maxLength: 40 }),
        fc.integer({ min: 1, max: 8 }),
        async (delays, limit) => {
          let running = 0;
          let peak = 0;
          const out = await mapConcurrent(delays, limit, async (d, i) => {
            running++;
            peak = Math.max(peak, running);
            for (let k = 0; k < d; k++) await tick();
            running--;
            return i * 2;
          });
          assert.deepEqual(
            out,
            delays.map((_, i) => i * 2),
          );
          assert.ok(peak <= limit);
        },
      ),
    );
  });

  it('rejects with the first error and starts no new items after it', async () => {
    const started: number[] = [];
    await assert.rejects(
      mapConcurrent([0, 1, 2, 3, 4, 5, 6, 7], 2, async (i) => {
        started.push(i);
        await tick();
        if (i === 1) throw new Error('boom');
        return i;
      }),
      /boom/,
    );
    assert.ok(started.length <= 3, `started ${started.join(',')}`);
  });
});
