// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Rollout } from '../../../core/rollout/types.ts';
import type { HistoryEvent, MachineRecord, StoredState } from '../../ports/store.ts';
import { d10, d11, idle, w1 } from '../../decide/fixtures.test.ts';
import { eventFor } from './events.ts';
import { kubeName, mirrorObjects, stampTransitions, type MirrorObject } from './view.ts';

const w2: MachineRecord = { ...w1, id: 'w-2' };
const w3: MachineRecord = { ...w1, id: 'w-3' };

const rollout = (over: Partial<Rollout> = {}): Rollout => ({
  id: 'workers-1.1.0-bbbbbbbb',
  pool: 'workers',
  target: { version: '1.1.0', digest: d11 },
  from: { version: '1.0.0', digest: d10 },
  state: 'Active',
  createdAt: 1_000,
  machines: {
    'w-1': { phase: 'Succeeded', startedAt: 2_000, finishedAt: 3_000 },
    'w-2': { phase: 'InFlight', startedAt: 4_000 },
  },
  ...over,
});

const state = (rollouts: Rollout[]): StoredState => ({
  machines: [w1, w2, w3],
  rollouts,
  starts: [],
  holds: {},
  blocks: [],
});

function view(rollouts: Rollout[], observed = new Map<string, string>()): MirrorObject[] {
  return mirrorObjects({
    state: state(rollouts),
    pools: [{ name: 'workers', channel: 'stable', policies: [] }],
    observed: (id) => {
      const digest = observed.get(id);
      return digest === undefined ? undefined : { at: 5_000, status: idle(digest, null, id) };
    },
  });
}

const find = (objs: MirrorObject[], kind: MirrorObject['kind'], name: string): MirrorObject => {
  const o = objs.find((x) => x.kind === kind && x.name === name);
  assert.ok(o, `${kind} ${name}`);
  return o;
};

const cond = (o: MirrorObject, type: string) => o.status.conditions.find((c) => c.type === type);

describe('the Kubernetes status view', () => {
  it('shows a rollout with its progress over the whole pool and a Progressing condition', () => {
    const r = find(view([rollout()]), 'Rollout', 'workers-1.1.0-bbbbbbbb');
    assert.deepEqual(r.spec, {
      pool: 'workers',
      target: { version: '1.1.0', digest: d11 },
      from: { version: '1.0.0', digest: d10 },
    });
    assert.equal(r.status['phase'], 'Active');
    assert.equal(r.status['progress'], '1/3');
    assert.deepEqual(
      [r.status['succeeded'], r.status['inFlight'], r.status['pending'], r.status['failed']],
      [1, 1, 1, 0],
    );
    assert.equal(cond(r, 'Progressing')?.status, 'True');
    assert.equal(cond(r, 'Complete')?.status, 'False');
    assert.match(cond(r, 'Progressing')?.message ?? '', /1 of 3 machines on 1\.1\.0/);
  });

  it('counts an image rollout in workloads, and names it by its id', () => {
    const image = rollout({
      id: 'img-web-1.8.0-rev2-cccccccc',
      pool: 'web/1.8.0-rev2',
      target: { version: '1.8.0-rev2', digest: d11 },
      machines: { 'Deployment/shop/web': { phase: 'Succeeded' } },
      images: { policy: 'web', repository: 'reg/web', units: {} },
    });
    const r = find(view([image]), 'Rollout', 'img-web-1.8.0-rev2-cccccccc');
    assert.equal(r.status['progress'], '1/1');
    assert.match(cond(r, 'Progressing')?.message ?? '', /^1 of 1 workloads on 1\.8\.0-rev2$/);
  });

  it('names the failed machine and its reason on a halted rollout', () => {
    const halted = rollout({
      state: 'Halted',
      machines: { 'w-1': { phase: 'RolledBack', reason: 'health deadline passed' } },
    });
    const r = find(view([halted]), 'Rollout', 'workers-1.1.0-bbbbbbbb');
    assert.equal(cond(r, 'Halted')?.status, 'True');
    assert.equal(cond(r, 'Progressing')?.status, 'False');
    assert.match(cond(r, 'Halted')?.message ?? '', /w-1 RolledBack \(health deadline passed\)/);
    assert.deepEqual(
      [r.status['failed'], r.status['rolledBack']],
      [1, 1],
      'FAILED counts the rolled-back machine, as molt rollout list does',
    );
  });

  it('shows each machine with what it boots, its target and its phase in the rollout', () => {
    const objs = view(
      [rollout()],
      new Map([
        ['w-1', d11],
        ['w-2', d10],
        ['w-3', d11],
      ]),
    );
    const phase = (id: string) => find(objs, 'NodeUpgrade', id).status['phase'];
    assert.equal(phase('w-1'), 'Upgraded');
    assert.equal(phase('w-2'), 'Upgrading');
    assert.equal(phase('w-3'), 'UpToDate', 'pending but already on the target digest');
    const w2view = find(objs, 'NodeUpgrade', 'w-2');
    assert.deepEqual(w2view.status['booted'], { digest: d10, version: '1.0.0' });
    assert.equal(cond(w2view, 'UpToDate')?.status, 'False');
    assert.equal(cond(w2view, 'Reachable')?.status, 'True');
  });

  it('shows a machine its completed rollout upgraded but that boots another release as Drifted', () => {
    const objs = view([rollout({ state: 'Completed' })], new Map([['w-1', d10]]));
    const w1view = find(objs, 'NodeUpgrade', 'w-1');
    assert.equal(w1view.status['phase'], 'Drifted');
    assert.equal(cond(w1view, 'UpToDate')?.reason, 'Drifted');
    assert.match(
      cond(w1view, 'UpToDate')?.message ?? '',
      /upgraded to 1\.1\.0 by workers-1\.1\.0-bbbbbbbb/,
    );
    const unseen = find(view([rollout({ state: 'Completed' })]), 'NodeUpgrade', 'w-1');
    assert.equal(unseen.status['phase'], 'Upgraded', 'not observed: no drift claimed');
  });

  it('marks a machine nobody has observed as not reachable, and shows Idle without rollouts', () => {
    const m = find(view([]), 'NodeUpgrade', 'w-1');
    assert.equal(m.status['phase'], 'Idle');
    assert.equal(cond(m, 'Reachable')?.reason, 'NotObserved');
  });

  it('shows a channel with its newest release and the pools that follow it', () => {
    const older = rollout({
      id: 'workers-1.0.0-aaaaaaaa',
      createdAt: 1,
      target: { version: '1.0.0', digest: d10 },
    });
    const c = find(view([older, rollout()]), 'Channel', 'stable');
    assert.deepEqual(c.status['latest'], { version: '1.1.0', digest: d11 });
    assert.equal(c.status['poolList'], 'workers');
  });

  it('makes any id a valid object name, keeping distinct ids distinct', () => {
    assert.equal(kubeName('w-1'), 'w-1');
    assert.equal(kubeName('pool-1.2.0-abc'), 'pool-1.2.0-abc');
    const a = kubeName('Pool_A');
    const b = kubeName('pool-a');
    assert.match(a, /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/);
    assert.notEqual(a, b);
    assert.match(kubeName('__'), /^x-[0-9a-f]{8}$/);
  });

  it('keeps a condition’s transition time until its status changes', () => {
    const before = [
      {
        type: 'Complete',
        status: 'False' as const,
        reason: 'Active',
        message: '',
        lastTransitionTime: 't0',
      },
    ];
    const same = stampTransitions([{ ...before[0]!, message: 'changed text' }], before, 't1');
    assert.equal(same[0]?.lastTransitionTime, 't0');
    const flipped = stampTransitions([{ ...before[0]!, status: 'True' }], before, 't1');
    assert.equal(flipped[0]?.lastTransitionTime, 't1');
  });
});

describe('operator history as Kubernetes Events', () => {
  const h = (over: Partial<HistoryEvent>): HistoryEvent => ({
    seq: 7,
    at: 10_000,
    kind: 'machine-result',
    rollout: 'workers-1.1.0-bbbbbbbb',
    machine: 'w-2',
    message: 'w-2 rolled back',
    data: { phase: 'RolledBack' },
    ...over,
  });

  it('puts machine results on the rollout, with the machine as the related object', () => {
    const e = eventFor(h({}));
    assert.ok(e);
    assert.equal(e.type, 'Warning');
    assert.equal(e.reason, 'MachineRolledBack');
    assert.deepEqual(e.involved, { kind: 'Rollout', name: 'workers-1.1.0-bbbbbbbb' });
    assert.deepEqual(e.related, { kind: 'NodeUpgrade', name: 'w-2' });
  });

  it('gives every result a machine can end in its own reason; a quarantined machine is a warning', () => {
    const reasons = ['Succeeded', 'Failed', 'RolledBack', 'Skipped'].map(
      (phase) => eventFor(h({ data: { phase } }))?.reason,
    );
    assert.deepEqual(reasons, [
      'MachineUpgraded',
      'MachineFailed',
      'MachineRolledBack',
      'MachineQuarantined',
    ]);
    assert.equal(eventFor(h({ data: { phase: 'Skipped' } }))?.type, 'Warning');
  });

  it("says an image rollout's units are workloads, with no NodeUpgrade to relate", () => {
    const unit = (kind: HistoryEvent['kind'], phase?: string) =>
      eventFor(
        h({
          kind,
          rollout: 'img-web-1.8.0-rev2-cccccccc',
          machine: 'Deployment/shop/web',
          ...(phase === undefined ? { data: {} } : { data: { phase } }),
        }),
      );
    assert.deepEqual(
      [
        unit('machine-start'),
        unit('machine-result', 'Succeeded'),
        unit('machine-result', 'Failed'),
      ].map((e) => [e?.type, e?.reason, e?.related]),
      [
        ['Normal', 'WorkloadUpdating', undefined],
        ['Normal', 'WorkloadUpdated', undefined],
        ['Warning', 'WorkloadFailed', undefined],
      ],
    );
  });

  it('names an Event after its history entry, so writing it again is a conflict, not a copy', () => {
    assert.equal(eventFor(h({}))?.name, eventFor(h({}))?.name);
    assert.notEqual(eventFor(h({}))?.name, eventFor(h({ seq: 8 }))?.name);
  });

  it('turns rollout states into reasons and leaves planner decisions out', () => {
    const rolloutState = (state: string): HistoryEvent => ({
      seq: 9,
      at: 10_000,
      kind: 'rollout-state',
      rollout: 'workers-1.1.0-bbbbbbbb',
      message: `rollout ${state}`,
      data: { state },
    });
    const halted = eventFor(rolloutState('Halted'));
    assert.deepEqual([halted?.type, halted?.reason], ['Warning', 'RolloutHalted']);
    const done = eventFor(rolloutState('Completed'));
    assert.deepEqual([done?.type, done?.reason], ['Normal', 'RolloutCompleted']);
    assert.equal(eventFor(h({ kind: 'decision' })), undefined);
  });
});
