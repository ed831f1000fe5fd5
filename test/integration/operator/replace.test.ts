// SPDX-License-Identifier: Apache-2.0
// The replace strategy on real lab machines: a pool with `strategy: replace` moves each worker to
// the new release through the lab's machine provider, which really re-images it — the machine is
// powered off, its root wiped, the release installed from scratch into slot A and booted at the
// same endpoint — one machine at a time, and the operator counts it done only once the fresh
// agent boots the target.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Pool } from '../../../src/core/rollout/types.ts';
import { startLabProvider, type LabProvider } from '../../../src/testkit/lab-provider.ts';
import { official, startLabFleet, type WorkerFleet } from '../../../src/lab/fleet/fleet.ts';
import { startBenchOperator, type BenchOperator } from './lab-operator.ts';
import { maxOverlap, ranAt } from '../../../src/testkit/rollout-timing.ts';
import { moltArgv } from '../../../src/testkit/molt-entry.ts';

let fleet: WorkerFleet;
let provider: LabProvider;
let operator: BenchOperator;

before(async () => {
  fleet = await startLabFleet({ molt: moltArgv, workers: 2, controlPlane: false });
  provider = await startLabProvider({ reimage: (r) => fleet.reimage(r.machine, r.image) });
  const pool: Pool = {
    name: 'workers',
    channel: 'beta',
    strategy: 'replace',
    provider: { url: provider.url },
    policies: [{ kind: 'concurrency', limit: { count: 1 } }],
  };
  operator = await startBenchOperator(fleet, [pool]);
});

after(async () => {
  await operator.stop();
  await provider.close();
  await fleet.stop();
});

describe('the replace strategy on lab machines', () => {
  it('re-images each worker from scratch onto the new release, one at a time', async () => {
    const before = await Promise.all(fleet.workers.map((w) => w.status()));
    await fleet.publish('1.1.0', { ...official, 'dev.molt.channels': 'beta' });
    const rollout = await operator.completed('1.1.0', 'workers', 240_000);
    assert.deepEqual(provider.requests.map((r) => [r.machine, r.version]).sort(), [
      ['w-1', '1.1.0'],
      ['w-2', '1.1.0'],
    ]);
    assert.equal(maxOverlap(['w-1', 'w-2'].map((id) => ranAt(rollout, id))), 1);
    for (const [i, w] of fleet.workers.entries()) {
      const s = await w.status();
      assert.equal(s.version, '1.1.0');
      assert.equal(s.bootedSlot, 'A', 'a fresh install boots slot A');
      // From scratch: a new boot of a new install — slot B never written, no upgrade journalled.
      assert.notEqual(s.bootId, before[i]?.bootId);
      assert.equal(s.slots.find((x) => x.slot === 'B')?.status, 'empty');
      assert.equal(s.last, null);
    }
  });
});
