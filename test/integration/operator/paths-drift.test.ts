// SPDX-License-Identifier: Apache-2.0
// Version paths and drift on real lab machines: two workers on 1.0.0, an operator wired
// as `molt operator` is (real agents over mTLS, discovery over docker-registry, etcd store). 1.2.0
// upgrades only from 1.1.0 (`dev.molt.upgrade-from: >=1.1.0`), so once 1.1.0 is out the pool walks
// 1.0.0 → 1.1.0 → 1.2.0 as two rollouts, the first one naming the whole path. Then a worker is
// rolled back by hand (`molt node rollback`, straight to its agent): the operator sees it run
// 1.1.0 again and brings it back to 1.2.0 with a repair rollout under the pool's policies. Last, a
// release that never becomes healthy halts its rollout and is blocked for the pool, and a newer
// release's rollout supersedes the halted one.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Pool, Rollout } from '../../../src/core/rollout/types.ts';
import { eventually } from '../../../src/platform/process/managed-process.ts';
import { official, startLabFleet, type WorkerFleet } from '../../../src/lab/fleet/fleet.ts';
import { startBenchOperator, type BenchOperator } from './lab-operator.ts';
import { moltArgv } from '../../../src/testkit/molt-entry.ts';

let fleet: WorkerFleet;
let operator: BenchOperator;
const beta = { ...official, 'dev.molt.channels': 'beta' };

before(async () => {
  fleet = await startLabFleet({ molt: moltArgv, workers: 2, controlPlane: false });
  const pool: Pool = {
    name: 'workers',
    channel: 'beta',
    policies: [{ kind: 'concurrency', limit: { count: 1 } }],
  };
  operator = await startBenchOperator(fleet, [pool]);
});

after(async () => {
  await operator.stop();
  await fleet.stop();
});

describe('paths and drift on lab machines', () => {
  it('walks 1.0.0 → 1.1.0 → 1.2.0 as two rollouts when 1.2.0 only upgrades from 1.1.0', async () => {
    await fleet.publish('1.2.0', { ...beta, 'dev.molt.upgrade-from': '>=1.1.0' });
    await operator.scanned(); // a scan that saw 1.2.0: nothing reachable yet
    assert.deepEqual((await operator.store.read()).rollouts, [], 'no path from 1.0.0 yet');
    await fleet.publish('1.1.0', beta);
    const first = await operator.completed('1.1.0', 'workers', 180_000);
    assert.deepEqual(first.path, ['1.1.0', '1.2.0'], 'the first step names the whole path');
    assert.equal(first.from?.version, '1.0.0');
    const second = await operator.completed('1.2.0', 'workers', 180_000);
    assert.equal(second.from?.version, '1.1.0');
    assert.ok(second.createdAt >= first.createdAt);
    for (const w of fleet.workers) assert.equal((await w.status()).version, '1.2.0', w.id);
  });

  it('brings a worker rolled back by hand back to the pool’s release with a repair rollout', async () => {
    const [w] = fleet.workers;
    assert.ok(w !== undefined);
    const completed = await operator.rolloutTo('1.2.0', 'workers');
    const back = await w.molt(['node', 'rollback']);
    assert.equal(back.code, 0, back.stderr);
    const repair = await eventually(
      async () => {
        const r = (await operator.store.read()).rollouts.find(
          (x): x is Rollout & { repairOf: string } => x.repairOf === completed?.id,
        );
        assert.equal(r?.state, 'Completed', operator.log.slice(-6).join('\n'));
        return r;
      },
      { timeoutMs: 180_000, intervalMs: 500 },
    );
    assert.equal(repair.target.version, '1.2.0');
    assert.deepEqual(Object.keys(repair.machines), [w.id], 'only the drifted worker moved');
    assert.equal(repair.machines[w.id]?.phase, 'Succeeded');
    const s = await w.status();
    assert.equal(s.version, '1.2.0');
    assert.equal(s.boot.committed, s.bootedSlot);
  });

  it('halts on a bad release and blocks it; a newer release supersedes the halted rollout', async () => {
    await fleet.publish('1.3.0', { ...beta, 'dev.molt.lab.health': 'never' });
    const halted = await eventually(
      async () => {
        const r = await operator.rolloutTo('1.3.0', 'workers');
        assert.equal(r?.state, 'Halted', operator.log.slice(-6).join('\n'));
        return r;
      },
      { timeoutMs: 180_000, intervalMs: 500 },
    );
    const blocks = (await operator.store.read()).blocks;
    assert.deepEqual(
      blocks.map((b) => [b.digest, b.pool, b.rollout]),
      [[fleet.digest('1.3.0'), 'workers', halted.id]],
    );
    await fleet.publish('1.4.0', beta);
    await operator.completed('1.4.0', 'workers', 180_000);
    const after = (await operator.store.read()).rollouts;
    const ended = after.find((r) => r.id === halted.id);
    assert.equal(ended?.state, 'Superseded');
    assert.match(ended.endReason ?? '', /^superseded by workers-1\.4\.0-/);
    assert.equal(
      after.filter((r) => r.target.digest === fleet.digest('1.3.0')).length,
      1,
      'the blocked release is never offered again',
    );
    for (const w of fleet.workers) assert.equal((await w.status()).version, '1.4.0', w.id);
  });
});
