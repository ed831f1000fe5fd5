// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { emptyCounts, type RolloutView } from '../../../protocol/index.ts';
import { describeRollout } from './render.ts';

const step: RolloutView = {
  id: 'workers-1.7.2-77777777',
  pool: 'workers',
  target: { version: '1.7.2', digest: 'sha256:7' },
  from: { version: '1.6.0', digest: 'sha256:6' },
  path: ['1.7.2', '1.8.0'],
  state: 'Active',
  createdAt: '2026-11-26T12:00:00.000Z',
  counts: emptyCounts(0),
  machines: [],
};

describe('molt rollout status (rendering)', () => {
  it('shows where the pool came from and the whole path when the target is one step of it', () => {
    const text = describeRollout(step);
    assert.match(text, /^from: {5}1\.6\.0 \(sha256:6\)$/m);
    assert.match(
      text,
      /^path: {5}1\.6\.0 → 1\.7\.2 → 1\.8\.0 \(a step; the next starts when this completes\)$/m,
    );
  });

  it('shows neither for a direct rollout with nothing recorded before it', () => {
    const direct: RolloutView = { ...step };
    delete direct.from;
    delete direct.path;
    const text = describeRollout(direct);
    assert.doesNotMatch(text, /^(from|path):/m);
  });

  it('marks a pending machine that holds the release staged, and only that one', () => {
    const text = describeRollout({
      ...step,
      counts: emptyCounts(2, { Pending: 2 }),
      machines: [
        { machine: 'w-1', phase: 'Pending', staged: true },
        { machine: 'w-2', phase: 'Pending' },
      ],
    });
    assert.match(text, /^w-1 +Pending \(staged\) /m);
    assert.match(text, /^w-2 +Pending +- /m);
  });
});
