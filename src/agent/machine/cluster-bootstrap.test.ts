// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setImmediate as tick } from 'node:timers/promises';
import { createFakeClock } from '../ports/clock.fake.ts';
import type { ClusterBootstrap, ClusterBootstrapOutcome } from '../ports/cluster-bootstrap.ts';
import { startClusterBootstrap, type ClusterBootstrapRecord } from './cluster-bootstrap.ts';

const Outcome: ClusterBootstrapOutcome = { rbac: ['ClusterRoleBinding/a'], token: 'created' };

/** A bootstrap that fails with each of `failures` in turn, then succeeds. */
function flaky(failures: string[]): ClusterBootstrap & { runs: Date[] } {
  const runs: Date[] = [];
  return {
    runs,
    run(now) {
      runs.push(now);
      const failure = failures.shift();
      return failure === undefined ? Promise.resolve(Outcome) : Promise.reject(new Error(failure));
    },
  };
}

function memoryRecord(done = false): ClusterBootstrapRecord & { marks: ClusterBootstrapOutcome[] } {
  const marks: ClusterBootstrapOutcome[] = [];
  return {
    marks,
    done: () => Promise.resolve(done || marks.length > 0),
    mark(outcome) {
      marks.push(outcome);
      return Promise.resolve();
    },
  };
}

/** Let the loop run until it waits on the clock again. */
const settle = async (): Promise<void> => {
  for (let i = 0; i < 20; i++) await tick();
};

describe('the cluster bootstrap loop', () => {
  it('tries again after failures, waiting longer each time, and records one success', async () => {
    const clock = createFakeClock();
    const bootstrap = flaky(['API not up', 'API not up', 'connection refused']);
    const record = memoryRecord();
    const lines: string[] = [];
    const loop = startClusterBootstrap({ bootstrap, record, clock, log: (l) => lines.push(l) });
    await settle();
    assert.equal(bootstrap.runs.length, 1);
    clock.advance(4_999);
    await settle();
    assert.equal(bootstrap.runs.length, 1, 'the first wait is 5 s');
    clock.advance(1);
    await settle();
    assert.equal(bootstrap.runs.length, 2);
    clock.advance(9_999);
    await settle();
    assert.equal(bootstrap.runs.length, 2, 'the second wait is 10 s');
    clock.advance(1);
    await settle();
    clock.advance(20_000);
    assert.equal(await loop.ended, 'done');
    assert.equal(bootstrap.runs.length, 4);
    assert.deepEqual(record.marks, [Outcome]);
    // The same failure twice in a row is logged once.
    assert.equal(lines.filter((l) => l.includes('API not up')).length, 1);
    assert.equal(lines.filter((l) => l.includes('connection refused')).length, 1);
    assert.match(
      lines.at(-1) ?? '',
      /done \(1 RBAC objects applied, bootstrap token created, attempt 4\)/,
    );
  });

  it('does nothing on a machine that already bootstrapped its cluster', async () => {
    const bootstrap = flaky([]);
    const loop = startClusterBootstrap({
      bootstrap,
      record: memoryRecord(true),
      clock: createFakeClock(),
      log: () => undefined,
    });
    assert.equal(await loop.ended, 'already');
    assert.equal(bootstrap.runs.length, 0);
  });

  it('never waits longer than the bound, and stops without recording when the agent stops', async () => {
    const clock = createFakeClock();
    const bootstrap = flaky(Array.from({ length: 10 }, (_, i) => `failure ${String(i)}`));
    const record = memoryRecord();
    const loop = startClusterBootstrap({
      bootstrap,
      record,
      clock,
      log: () => undefined,
      retryMs: 1_000,
      maxRetryMs: 3_000,
    });
    for (let i = 0; i < 5; i++) {
      await settle();
      clock.advance(3_000);
    }
    await settle();
    assert.equal(bootstrap.runs.length, 6, 'waits of 1, 2, then 3 s: a try every advance');
    const stopped = loop.stop();
    clock.advance(3_000);
    assert.equal(await stopped, 'stopped');
    assert.deepEqual(record.marks, []);
  });
});
