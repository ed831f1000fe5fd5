// SPDX-License-Identifier: Apache-2.0
// Builds and packs of one checkout, one at a time: a tarball packed while another build rewrote
// dist/ lacked a chunk its molt.js imported, and no machine installed from it could start its agent.
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, it } from 'node:test';
import { checkoutBuildLock } from './molt-package.ts';

describe('the checkout’s build-and-pack lock', () => {
  it('never lets two builds of the checkout overlap, and each gets its answer', async () => {
    const spans: [number, number][] = [];
    const build = (n: number) =>
      checkoutBuildLock(async () => {
        const start = performance.now();
        await sleep(300);
        spans.push([start, performance.now()]);
        return n;
      });
    assert.deepEqual(await Promise.all([build(1), build(2), build(3)]), [1, 2, 3]);
    const sorted = spans.toSorted((a, b) => a[0] - b[0]);
    for (let i = 1; i < sorted.length; i++)
      assert.ok(
        (sorted[i]?.[0] ?? 0) >= (sorted[i - 1]?.[1] ?? Infinity),
        `overlap: ${JSON.stringify(sorted)}`,
      );
  });

  it('lets the next build in when one fails', async () => {
    await assert.rejects(
      checkoutBuildLock(() => Promise.reject(new Error('tsc failed'))),
      /tsc failed/,
    );
    assert.equal(await checkoutBuildLock(() => Promise.resolve('next')), 'next');
  });
});
