// SPDX-License-Identifier: Apache-2.0
/** ADR 0014 decision 5: the Machine's MoltInPlaceUpdate condition and the remediation of a failed update. */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { UpdateMachineRequest } from '../../protocol/capi-hooks.ts';
import type { CapiMachines, MoltCondition } from '../ports/capi-machines.ts';
import { FakeCapiMachines } from '../ports/capi-machines.fake.ts';
import { FakeInPlaceUpdates } from '../ports/in-place-updates.fake.ts';
import { updateMachine, type HookDeps } from './answers.ts';
import { machineStatus, type MachineStatusDeps } from './machine-status.ts';

const fixture = (name: string): UpdateMachineRequest =>
  UpdateMachineRequest.parse(
    JSON.parse(readFileSync(new URL(`testdata/${name}.json`, import.meta.url), 'utf8')),
  );
/** A KCP Machine (label cluster.x-k8s.io/control-plane) and a MachineDeployment's, both to v1.35.0. */
const cp = fixture('updatemachine.kcp-machine.request');
const worker = fixture('updatemachine.md-machine.request');
const CP = 'demo/c1-cp-85mnm';
const WORKER = 'demo/c1-md-qbjnv-mn4b6';

function world(
  o: {
    failing?: boolean;
    onFailure?: 'remediate' | 'report';
    machines?: CapiMachines;
    version?: string;
  } = {},
) {
  const machines = new FakeCapiMachines();
  const lines: string[] = [];
  let now = Date.parse('2026-01-02T03:04:05Z');
  const statusDeps: MachineStatusDeps = {
    machines: o.machines ?? machines,
    onFailure: o.onFailure ?? 'remediate',
    now: () => now,
    log: (l) => lines.push(l),
    budgetMs: 200,
  };
  const deps: HookDeps = {
    updates: new FakeInPlaceUpdates({
      managed: [CP, WORKER],
      controlPlane: [CP],
      steps: 2,
      ...(o.failing === true && { failing: ['v1.35.0'] }),
      uncarried: ['v1.99.0'],
      ...(o.version !== undefined && { version: o.version }),
    }),
    releaseForVersion: () => 'molt-2.4.0',
    status: machineStatus(statusDeps),
  };
  return {
    machines,
    lines,
    deps,
    tick: (ms: number) => {
      now += ms;
    },
  };
}

const condition = (w: { machines: FakeCapiMachines }, key: string): MoltCondition | undefined =>
  w.machines.machines.get(key)?.condition;

describe('the MoltInPlaceUpdate condition', () => {
  it('is Unknown/InProgress with molt’s message while the update runs, written once per change', async () => {
    const w = world();
    const a = await updateMachine(worker, w.deps);
    assert.equal(a.status, 'Success');
    assert.deepEqual(condition(w, WORKER), {
      status: 'Unknown',
      reason: 'InProgress',
      message: `${WORKER}: writing slot B`,
      lastTransitionTime: '2026-01-02T03:04:05.000Z',
    });
    w.tick(10_000);
    await updateMachine(worker, w.deps); // the same answer: no second write
    assert.equal(w.machines.writes.length, 1);
  });

  it('turns True/Updated when the machine runs the release, stamped when it changed', async () => {
    const w = world();
    await updateMachine(worker, w.deps);
    await updateMachine(worker, w.deps);
    w.tick(10_000);
    const a = await updateMachine(worker, w.deps);
    assert.equal(a.retryAfterSeconds, 0);
    assert.deepEqual(condition(w, WORKER), {
      status: 'True',
      reason: 'Updated',
      message: `${WORKER} runs Kubernetes v1.35.0`,
      lastTransitionTime: '2026-01-02T03:04:15.000Z',
    });
    assert.deepEqual(w.machines.remediations, []);
  });
});

describe('a failed in-place update', () => {
  it('is False/RolledBack, and a control-plane Machine is annotated for KCP once', async () => {
    const w = world({ failing: true });
    const first = await updateMachine(cp, w.deps);
    const again = await updateMachine(cp, w.deps);
    assert.equal(first.status, 'Failure');
    assert.deepEqual(again, first);
    assert.deepEqual(condition(w, CP), {
      status: 'False',
      reason: 'RolledBack',
      message: `${CP}: v1.35.0 failed its health checks; rolled back`,
      lastTransitionTime: '2026-01-02T03:04:05.000Z',
    });
    assert.deepEqual(w.machines.remediations, [{ machine: CP, how: 'annotated' }]);
    assert.deepEqual(w.machines.machine(CP).annotations, {
      'cluster.x-k8s.io/remediate-machine': '',
    });
    assert.match(w.lines.join('\n'), /Machine demo\/c1-cp-85mnm failed .* annotated it/);
  });

  it('deletes a worker Machine (its MachineSet replaces it)', async () => {
    const w = world({ failing: true });
    await updateMachine(worker, w.deps);
    assert.deepEqual(w.machines.remediations, [{ machine: WORKER, how: 'deleted' }]);
    assert.equal(w.machines.machine(WORKER).deleted, true);
    assert.equal(condition(w, WORKER)?.reason, 'RolledBack');
  });

  it('deletes nothing when the Machine under that name is no longer the one molt read', async () => {
    const w = world({ failing: true });
    w.machines.add(WORKER, { uid: 'uid-created-again' });
    await updateMachine(worker, w.deps);
    assert.deepEqual(w.machines.remediations, [{ machine: WORKER, how: 'gone' }]);
    assert.equal(w.machines.machine(WORKER).deleted, false);
  });

  it('does not hand a Machine to CAPI for a failure of molt’s own (no release carries the version)', async () => {
    const w = world({ version: 'v1.99.0' });
    const uncarried = UpdateMachineRequest.parse(
      JSON.parse(JSON.stringify(worker).replaceAll('v1.35.0', 'v1.99.0')),
    );
    const a = await updateMachine(uncarried, w.deps);
    assert.equal(a.status, 'Failure');
    assert.equal(condition(w, WORKER)?.reason, 'NotUpdated');
    assert.deepEqual(w.machines.remediations, []);
  });

  it('with onFailure report, only sets the condition', async () => {
    const w = world({ failing: true, onFailure: 'report' });
    const a = await updateMachine(worker, w.deps);
    assert.equal(a.status, 'Failure');
    assert.equal(condition(w, WORKER)?.status, 'False');
    assert.deepEqual(w.machines.remediations, []);
    assert.equal(w.machines.machine(WORKER).deleted, false);
  });

  it('a write that fails is logged, the answer is unchanged, and the next call tries again', async () => {
    const w = world({ failing: true });
    w.machines.fail = true;
    const a = await updateMachine(worker, w.deps);
    assert.equal(a.status, 'Failure');
    assert.match(a.message ?? '', /rolled back/);
    assert.match(
      w.lines.join('\n'),
      /Machine demo\/c1-md-qbjnv-mn4b6: could not write Machine demo\/c1-md-qbjnv-mn4b6.*tried again/,
    );
    assert.deepEqual(w.machines.remediations, []);
    w.machines.fail = false;
    await updateMachine(worker, w.deps);
    assert.equal(condition(w, WORKER)?.reason, 'RolledBack');
    assert.deepEqual(w.machines.remediations, [{ machine: WORKER, how: 'deleted' }]);
  });
});

describe('the hook answer', () => {
  it('does not wait past the budget for a Machine write that hangs', async () => {
    const hanging: CapiMachines = {
      setCondition: () => new Promise<void>(() => undefined),
      remediate: () => new Promise(() => undefined),
      find: () => new Promise(() => undefined),
      get: () => new Promise(() => undefined),
      ofMachineSet: () => new Promise(() => undefined),
    };
    const w = world({ machines: hanging });
    const started = performance.now();
    const a = await updateMachine(worker, w.deps);
    const took = performance.now() - started;
    assert.equal(a.status, 'Success');
    assert.ok(took >= 190 && took < 1_000, `answered after ${String(took)} ms`);
  });

  it('without a status writer nothing is written: the same answers', async () => {
    const w = world({ failing: true });
    const a = await updateMachine(worker, { ...w.deps, status: undefined });
    assert.equal(a.status, 'Failure');
    assert.equal(w.machines.writes.length, 0);
    assert.deepEqual(w.machines.remediations, []);
  });
});

describe('what machine status remembers', () => {
  it('forgets the oldest Machine past its bound: one more write, nothing else', async () => {
    const machines = new FakeCapiMachines();
    const status = machineStatus({
      machines,
      onFailure: 'remediate',
      now: () => 0,
      log: () => undefined,
      remember: 1,
    });
    const ref = (name: string) =>
      ({
        kind: 'Machine',
        namespace: 'demo',
        name,
        machine: name,
        pool: 'workers',
        controlPlane: false,
      }) as const;
    const running = { state: 'in-progress', message: 'writing slot B' } as const;
    await status.report(ref('a'), running);
    await status.report(ref('a'), running);
    assert.equal(machines.writes.length, 1, 'unchanged: not written again');
    await status.report(ref('b'), running);
    await status.report(ref('a'), running);
    assert.deepEqual(
      machines.writes.map((x) => x.machine),
      ['demo/a', 'demo/b', 'demo/a'],
      'a was forgotten when b came',
    );
  });
});
