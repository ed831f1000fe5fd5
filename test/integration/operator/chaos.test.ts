// SPDX-License-Identifier: Apache-2.0
// Chaos: the real `molt operator` process is SIGKILLed at ≥ 20 random points during one
// rollout over a six-machine lab fleet (three control-plane machines running the etcd cluster
// that also holds the operator's state and leader claim, three workers), and restarted each time.
// Afterwards the recorded history must show every invariant held: no machine started twice, one
// control-plane machine at a time, workers only after the control plane, the canary alone and
// soaked, concurrency never exceeded — and every machine ends committed on the target release.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Rollout } from '../../../src/core/rollout/types.ts';
import { createEtcdOperatorStore } from '../../../src/operator/adapters/etcd-store/operator-store.ts';
import type { OperatorStore } from '../../../src/operator/ports/store.ts';
import {
  startProcess,
  type ManagedProcess,
} from '../../../src/platform/process/managed-process.ts';
import { moltEntry } from '../lab/harness.ts';
import { official, startLabFleet, type LabFleet } from '../../../src/lab/fleet/fleet.ts';
import { writeOperatorFiles } from '../../../src/lab/fleet/operator-files.ts';
import { maxOverlap, ranAt, startsPerMachine } from '../../../src/testkit/rollout-timing.ts';
import { moltArgv } from '../../../src/testkit/molt-entry.ts';

const minKills = 20;
const canarySoakMs = 1_000;
let fleet: LabFleet;
let store: OperatorStore;
let configFile: string;
const seed = Number(process.env['MOLT_CHAOS_SEED'] ?? Date.now() % 1_000_000);

/** A small deterministic PRNG, so a failing run can be replayed with MOLT_CHAOS_SEED. */
function random(): () => number {
  let s = seed;
  return () => {
    s = (s * 1_103_515_245 + 12_345) % 2 ** 31;
    return s / 2 ** 31;
  };
}

async function writeConfig(): Promise<string> {
  return writeOperatorFiles(fleet, {
    pools: [
      {
        name: 'control-plane',
        channel: 'stable',
        policies: [{ concurrency: 1 }, { machineSoak: '10s' }],
      },
      {
        name: 'workers',
        channel: 'stable',
        policies: [
          { canary: { count: 1, soak: '1s' } },
          { concurrency: 1 },
          { machineSoak: '10s' },
          { failureBudget: 1 },
        ],
      },
    ],
    config: { leaderTtl: '2s' },
  });
}

const startOperator = (n: number): ManagedProcess =>
  startProcess(`molt operator #${String(n)}`, process.execPath, [
    moltEntry,
    'operator',
    '--config',
    configFile,
  ]);

before(async () => {
  fleet = await startLabFleet({ molt: moltArgv, workers: 3 });
  store = createEtcdOperatorStore({ endpoints: fleet.cluster.endpoints });
  configFile = await writeConfig();
});

after(async () => {
  await store.close();
  await fleet.stop();
});

async function rollouts(): Promise<Rollout[]> {
  return (await store.read()).rollouts.filter((r) => r.target.digest === fleet.digest('1.1.0'));
}

const allCompleted = async (): Promise<boolean> => {
  const rs = await rollouts();
  return rs.length === 2 && rs.every((r) => r.state === 'Completed');
};

/**
 * Start an operator, wait until it leads, let it work a random while, SIGKILL it — while the
 * rollout is still running — until `minKills` kills; then one last operator finishes the rollout.
 * Only kills made before the rollout completed count.
 */
async function killRepeatedly(): Promise<{ kills: number; last: ManagedProcess }> {
  const next = random();
  let kills = 0;
  for (let n = 1; n < 200; n++) {
    const operator = startOperator(n);
    await operator.waitFor(/leading as/, 60_000);
    if (kills < minKills && !(await allCompleted())) {
      await sleep(100 + Math.floor(next() * 1_000));
      if (!(await allCompleted())) {
        process.kill(operator.pid, 'SIGKILL');
        await operator.exited;
        kills++;
        continue;
      }
    }
    for (let i = 0; i < 300 && !(await allCompleted()); i++) await sleep(1_000);
    return { kills, last: operator };
  }
  throw new Error('the rollout never completed');
}

describe(`molt operator killed at ${String(minKills)}+ random points of one rollout (seed ${String(seed)})`, () => {
  it('keeps every invariant and finishes the rollout', async () => {
    await fleet.publish('1.1.0', { ...official, 'dev.molt.channels': 'stable' });
    const { kills, last } = await killRepeatedly();
    try {
      assert.ok(
        kills >= minKills,
        `killed only ${String(kills)} times before the rollout completed`,
      );
      assert.ok(
        await allCompleted(),
        `rollouts: ${JSON.stringify(await rollouts())}\n${last.output().slice(-3000)}`,
      );
      const { starts } = await store.read();
      for (const [key, n] of startsPerMachine(starts))
        assert.equal(n, 1, `${key} started ${String(n)} times`);
      const rs = await rollouts();
      const cpRollout = rs.find((r) => r.pool === 'control-plane')!;
      const wRollout = rs.find((r) => r.pool === 'workers')!;
      const cpRuns = fleet.cluster.machines.map((m) => ranAt(cpRollout, m.name));
      assert.equal(maxOverlap(cpRuns), 1, 'one control-plane machine at a time');
      const wRuns = fleet.workers.map((x) => ranAt(wRollout, x.id)).sort((a, b) => a[0] - b[0]);
      assert.ok(
        wRuns[0]![0] >= Math.max(...cpRuns.map((r) => r[1])),
        'workers after the control plane',
      );
      assert.equal(maxOverlap(wRuns), 1, 'worker concurrency 1');
      for (const later of wRuns.slice(1))
        assert.ok(later[0] >= wRuns[0]![1] + canarySoakMs, 'canary alone, then soaked');
      for (const m of fleet.all) {
        const s = await m.status();
        assert.equal(s.version, '1.1.0');
        assert.equal(s.boot.committed, s.bootedSlot);
        assert.equal(s.phase, 'Idle');
      }
      process.stderr.write(`chaos: ${String(kills)} operator kills (seed ${String(seed)})\n`);
    } finally {
      await last.stop();
    }
  });
});
