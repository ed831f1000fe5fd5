// SPDX-License-Identifier: Apache-2.0
// Staging ahead of a window on real lab machines (docs/adr/0019 §2): two workers on 1.0.0, an
// operator wired as `molt operator` is, a pool whose window opens at the next whole minute at
// least a minute away and whose `stage.ahead` lets one machine at a time stage. While the window
// is closed both workers pull, write and verify 1.1.0 without arming it, and nothing reboots;
// once it opens each start applies the staged operation (the same operation id), and the pool
// ends on 1.1.0.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Pool } from '../../../src/core/rollout/types.ts';
import { eventually } from '../../../src/platform/process/managed-process.ts';
import { official, startLabFleet, type WorkerFleet } from '../../../src/lab/fleet/fleet.ts';
import { moltArgv } from '../../../src/testkit/molt-entry.ts';
import { startBenchOperator, type BenchOperator } from './lab-operator.ts';

let fleet: WorkerFleet;
let operator: BenchOperator;
/** When the pool's window opens: the next whole minute at least 60 s away (UTC). */
const opens = new Date(Math.ceil((Date.now() + 60_000) / 60_000) * 60_000);

before(async () => {
  fleet = await startLabFleet({ molt: moltArgv, workers: 2, controlPlane: false });
  const pool: Pool = {
    name: 'workers',
    channel: 'beta',
    stage: { ahead: true, concurrency: 1 },
    policies: [
      {
        kind: 'window',
        windows: [
          {
            cron: `${String(opens.getUTCMinutes())} ${String(opens.getUTCHours())} * * *`,
            durationMs: 3_600_000,
          },
        ],
      },
    ],
  };
  operator = await startBenchOperator(fleet, [pool]);
});

after(async () => {
  await operator.stop();
  await fleet.stop();
});

describe('staging ahead of a window on lab machines', () => {
  it('stages every waiting worker unarmed before the window, then each start only applies it', async () => {
    const before = new Map<string, string>();
    for (const w of fleet.workers) before.set(w.id, (await w.status()).bootId);
    await fleet.publish('1.1.0', { ...official, 'dev.molt.channels': 'beta' });
    const staged = await eventually(
      async () => {
        assert.ok(Date.now() < opens.getTime(), 'the window opened before both were staged');
        const r = await operator.rolloutTo('1.1.0', 'workers');
        assert.equal(Object.keys(r?.staged ?? {}).length, 2, operator.log.slice(-4).join('\n'));
        for (const w of fleet.workers) assert.equal((await w.status()).phase, 'Staged', w.id);
        return r;
      },
      { timeoutMs: 55_000, intervalMs: 250 },
    );
    assert.deepEqual(
      Object.keys(staged?.machines ?? {}),
      [],
      'nothing started: the window is shut',
    );
    for (const w of fleet.workers) {
      const s = await w.status();
      assert.equal(s.bootId, before.get(w.id), `${w.id} did not reboot`);
      assert.equal(s.version, '1.0.0');
      assert.equal(s.boot.oneShot, null, `${w.id}: nothing armed`);
      assert.ok(
        s.slots.some((slot) => slot.status === 'staged' && slot.version === '1.1.0'),
        JSON.stringify(s.slots),
      );
    }

    const done = await operator.completed('1.1.0', 'workers', 240_000);
    assert.ok(Date.now() >= opens.getTime());
    for (const w of fleet.workers) {
      const s = await w.status();
      assert.equal(s.version, '1.1.0', w.id);
      assert.equal(s.last?.result, 'Succeeded');
      assert.equal(
        done.machines[w.id]?.operationId,
        staged?.staged?.[w.id]?.operationId,
        `${w.id}: the start applied the staged operation`,
      );
      assert.ok(
        (done.machines[w.id]?.startedAt ?? 0) >= opens.getTime(),
        `${w.id} started inside the window`,
      );
    }
    const history = await operator.store.history();
    assert.equal(history.filter((e) => e.kind === 'machine-stage').length, 2);
  });
});
