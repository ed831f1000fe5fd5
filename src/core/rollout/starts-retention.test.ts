// SPDX-License-Identifier: Apache-2.0
// Start records are kept for the longest rate period, and at least a week.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { anyBefore, MinStartRetentionMs, startsCutoff } from './starts-retention.ts';

const day = 24 * 3_600_000;
const now = 100 * day;

describe('startsCutoff', () => {
  it('keeps a week of starts when no rate period is longer', () => {
    assert.equal(startsCutoff([], now), now - MinStartRetentionMs);
    const hourly = [{ kind: 'rate', count: 2, periodMs: 3_600_000 }] as const;
    assert.equal(
      startsCutoff([hourly, [{ kind: 'concurrency', limit: { count: 1 } }]], now),
      now - 7 * day,
    );
  });
  it('keeps the longest rate period of any pool or of the fleet', () => {
    const monthly = [{ kind: 'rate', count: 5, periodMs: 30 * day }] as const;
    const hourly = [{ kind: 'rate', count: 2, periodMs: 3_600_000 }] as const;
    assert.equal(startsCutoff([hourly, monthly], now), now - 30 * day);
  });
});

describe('anyBefore', () => {
  it('says whether a prune would drop anything', () => {
    const s = (at: number) => ({ machine: 'w-1', pool: 'workers', rollout: 'r', at });
    assert.equal(anyBefore([s(10), s(20)], 10), false);
    assert.equal(anyBefore([s(9), s(20)], 10), true);
  });
});
