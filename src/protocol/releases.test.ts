// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { releaseColumns, type ReleaseView } from './releases.ts';

const release = (created: string | null): ReleaseView => ({
  tag: '1.1.0',
  tags: ['1.1.0'],
  version: '1.1.0',
  digest: `sha256:${'a'.repeat(64)}`,
  channels: ['stable'],
  official: true,
  created,
  kubernetes: null,
  upgradeFrom: null,
  signature: 'unchecked',
});

describe('molt releases list', () => {
  const created = (r: ReleaseView, now: number): string =>
    releaseColumns.find((c) => c.header === 'CREATED')?.value(r, now) ?? '';

  it('shows when a release was made as every table shows a time: UTC to the second, and how long ago', () => {
    const now = Date.parse('2026-11-30T21:10:00.088Z');
    assert.equal(
      created(release('2026-11-30T21:05:00.088Z'), now),
      '2026-11-30T21:05:00Z (5m ago)',
    );
  });

  it('shows - for a release that says nothing, and an unreadable date as it is', () => {
    assert.equal(created(release(null), 0), '-');
    assert.equal(created(release('last tuesday'), 0), 'last tuesday');
  });
});
