// SPDX-License-Identifier: Apache-2.0
// The image driver (docs/adr/0013 decision 9) over the memory store and the fake workloads: a
// rebuild reaches the canary first, then the rest after the soak; a bad rebuild halts after the
// canary and is put back; an edit by someone else pauses; a tag gone pauses; a GM pin stays; a
// newer rebuild supersedes; the machine loop's view leaves image rollouts out.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ImagePolicy } from '../../core/images/types.ts';
import type { Rollout } from '../../core/rollout/types.ts';
import { scanOf } from '../../testkit/image-scan.ts';
import { at, d, followRebuilds, putDeployments, repo } from '../../testkit/image-world.ts';
import { nth } from '../../testkit/operator-store-fixtures.ts';
import { MemoryOperatorStore } from '../adapters/memory-store/operator-store.ts';
import { rollbackOn } from '../actions/rollback.ts';
import { machinePart } from '../decide/snapshot.ts';
import { FakeWorkloads } from '../ports/workloads.fake.ts';
import { imagePass } from './drive.ts';

function rig(o: { policy?: Partial<ImagePolicy>; workloads?: string[]; canary?: boolean } = {}) {
  let now = 1_000_000;
  let tags: Record<string, string> = {
    '1.8.0': d(1),
    '1.8.0-rev2': d(1),
    '1.8.0-rev2-b1': d(1),
  };
  const workloads = new FakeWorkloads(1);
  const names = o.workloads ?? ['canary-web', 'web-a', 'web-b'];
  putDeployments(
    workloads,
    names.map((name) => [name.startsWith('canary') ? 'canary' : 'shop', name] as const),
    at(d(1)),
  );
  let policy = followRebuilds({
    ...(o.canary !== false && { canary: { namespaces: ['canary'], soakMs: 60_000 } }),
    ...o.policy,
  });
  const store = new MemoryOperatorStore();
  const log: string[] = [];
  const deps = {
    policies: () => [policy],
    workloads,
    scan: (r: string) =>
      r === repo ? Promise.resolve(scanOf(tags)) : Promise.reject(new Error('unknown')),
    now: () => now,
    store,
    log: (l: string) => log.push(l),
  };
  return {
    workloads,
    store,
    log,
    /** Where a person's actions are recorded (the API's sink). */
    sink: { store, log: (l: string) => log.push(l), now: () => now },
    pass: () => imagePass(deps),
    push: (digest: string) => {
      tags = {
        ...tags,
        '1.8.0': digest,
        '1.8.0-rev2': digest,
        [`1.8.0-rev2-b${digest.slice(7, 9)}`]: digest,
      };
    },
    dropTag: (tag: string) => {
      tags = Object.fromEntries(Object.entries(tags).filter(([t]) => t !== tag));
    },
    tick: (ms: number) => (now += ms),
    /** A person edits the policy. */
    edit: (over: Partial<ImagePolicy>) => {
      policy = { ...policy, ...over };
    },
    image: async (name: string) =>
      (await workloads.list()).find((w) => w.name === name)?.containers[0]?.image,
    rollouts: async (): Promise<readonly Rollout[]> => (await store.read()).rollouts,
  };
}

type Rig = ReturnType<typeof rig>;

async function passes(r: Rig, n: number, stepMs = 1_000): Promise<void> {
  for (let i = 0; i < n; i++) {
    await r.pass();
    r.tick(stepMs);
  }
}

describe('the image driver', () => {
  it('moves a rebuild to the canary first, and to the rest after its soak', async () => {
    const r = rig();
    await r.pass();
    assert.deepEqual(await r.rollouts(), [], 'nothing moves while every unit is current');
    r.push(d(2));
    await r.pass();
    assert.equal(await r.image('canary-web'), at(d(2)));
    assert.equal(await r.image('web-a'), at(d(1)), 'the rest waits for the canary');
    await passes(r, 5);
    assert.equal(await r.image('web-a'), at(d(1)), 'and for its soak');
    r.tick(60_000);
    await passes(r, 6);
    assert.equal(await r.image('web-a'), at(d(2)));
    assert.equal(await r.image('web-b'), at(d(2)));
    const ro = nth(await r.rollouts(), 0);
    assert.equal(ro.state, 'Completed');
    assert.equal(ro.pool, 'web/1.8.0-rev2');
    assert.deepEqual(ro.target, { version: '1.8.0-rev2', digest: d(2) });
    assert.deepEqual(Object.keys(ro.images?.units ?? {}).sort(), [
      'Deployment/canary/canary-web',
      'Deployment/shop/web-a',
      'Deployment/shop/web-b',
    ]);
    assert.deepEqual(ro.images?.units['Deployment/shop/web-a']?.changes, [
      { container: 'web', from: at(d(1)), to: at(d(2)) },
    ]);
    const starts = (await r.store.read()).starts;
    assert.equal(starts.length, 3, 'each start is recorded (rate limits count them)');
    const said = (await r.store.history()).map((e) => e.message);
    assert.ok(
      said.some((m) => m.endsWith('completed: every workload finished (0 failures)')),
      said.join('\n'),
    );
  });

  it("keeps a person's rollback of a completed rollout: its digest is not offered again, a newer one is", async () => {
    const r = rig({ canary: false });
    await r.pass();
    r.push(d(2));
    await passes(r, 4);
    const done = nth(await r.rollouts(), 0);
    assert.equal(done.state, 'Completed');
    const who = { name: 'alice', role: 'operator' as const };
    await rollbackOn(r.sink, { id: done.id, who, reason: 'the rebuild breaks checkout' });
    await passes(r, 6);
    for (const name of ['canary-web', 'web-a', 'web-b'])
      assert.equal(await r.image(name), at(d(1)), `${name} stays where the person put it`);
    const all = await r.rollouts();
    assert.equal(all.length, 2, JSON.stringify(all.map((x) => [x.id, x.state])));
    assert.equal(all.find((x) => x.rollbackOf === done.id)?.state, 'Completed');
    assert.equal(all.find((x) => x.id === done.id)?.state, 'RolledBack', 'shown as rolled back');
    assert.deepEqual((await r.store.read()).blocks, [], 'an image digest needs no release block');
    r.push(d(3));
    await passes(r, 4);
    assert.equal(await r.image('web-a'), at(d(3)), 'a newer rebuild is offered as usual');
  });

  it('halts a bad rebuild after the canary and puts the canary back on its previous digest', async () => {
    const r = rig({ policy: { progressTimeoutMs: 30_000 } });
    await r.pass();
    r.workloads.unready.add(at(d(3)));
    r.push(d(3));
    await passes(r, 4, 20_000);
    const rollouts = await r.rollouts();
    const bad = nth(
      rollouts.filter((x) => x.rollbackOf === undefined),
      0,
    );
    const canary = bad.machines['Deployment/canary/canary-web'];
    assert.equal(canary?.phase, 'Failed');
    assert.match(canary.reason ?? '', /^ProgressTimeout/);
    assert.equal(bad.state, 'RolledBack', 'the halted rollout ends, naming its rollback');
    const said = (await r.store.history()).map((e) => e.message);
    assert.ok(
      said.some((m) => m.includes('failure budget: 1 workload failed')),
      said.join('\n'),
    );
    const back = rollouts.find((x) => x.rollbackOf === bad.id);
    assert.ok(back, 'onHalt defaults to rollback');
    assert.deepEqual(Object.keys(back.images?.units ?? {}), ['Deployment/canary/canary-web']);
    await passes(r, 3);
    assert.equal(await r.image('canary-web'), at(d(1)), 'the canary runs its previous digest');
    assert.equal(await r.image('web-a'), at(d(1)), 'the others were never touched');
    assert.equal((await r.rollouts()).find((x) => x.id === back.id)?.state, 'Completed');
    await passes(r, 3);
    assert.equal(await r.image('canary-web'), at(d(1)), 'the bad digest is not offered again');
    assert.equal((await r.rollouts()).length, 2);
  });

  it('stops at a halt with onHalt: stop, changing nothing back', async () => {
    const r = rig({ policy: { progressTimeoutMs: 30_000, onHalt: 'stop' } });
    await r.pass();
    r.workloads.unready.add(at(d(3)));
    r.push(d(3));
    await passes(r, 3, 20_000);
    const rollouts = await r.rollouts();
    assert.deepEqual(
      rollouts.map((x) => x.state),
      ['Halted'],
    );
    assert.equal(await r.image('canary-web'), at(d(3)));
  });

  it('pauses with the reason when someone else edits a workload before its change', async () => {
    const r = rig({ workloads: ['web-a'], canary: false });
    await r.pass();
    r.push(d(2));
    // The workload is listed, then edited before the driver writes: the patch's test op fails.
    const list = r.workloads.list.bind(r.workloads);
    r.workloads.list = async () => {
      const seen = await list();
      r.workloads.edit(
        { kind: 'Deployment', namespace: 'shop', name: 'web-a' },
        'web',
        `${repo}:hotfix`,
      );
      return seen;
    };
    await r.pass();
    const ro = nth(await r.rollouts(), 0);
    assert.equal(ro.state, 'Paused');
    assert.equal(ro.machines['Deployment/shop/web-a'], undefined, 'the unit is Pending again');
    assert.equal(await r.image('web-a'), `${repo}:hotfix`, 'the edit is kept');
    assert.ok(
      r.log.some((l) => l.includes('MOLT_WORKLOAD_EDITED')),
      r.log.join('\n'),
    );
  });

  it('pauses a rollout whose tag disappears mid-rollout (MOLT_IMAGE_MISSING)', async () => {
    const r = rig();
    await r.pass();
    r.push(d(2));
    await r.pass();
    r.dropTag('1.8.0-rev2');
    await r.pass();
    const [ro] = await r.rollouts();
    assert.equal(ro?.state, 'Paused');
    assert.ok(
      r.log.some((l) => l.includes('MOLT_IMAGE_MISSING')),
      r.log.join('\n'),
    );
  });

  it('never replaces a GM digest until a person drops the pin, then moves it in a repair rollout', async () => {
    const r = rig({
      workloads: ['web-a', 'web-b'],
      canary: false,
      policy: { gm: [{ digest: d(1), reason: 'GM of 1.8' }] },
    });
    r.workloads.put({
      kind: 'Deployment',
      namespace: 'shop',
      name: 'web-c',
      labels: {},
      containers: [{ name: 'web', image: `${repo}:1.8.0-rev2@${d(4)}` }],
    });
    r.push(d(2));
    await passes(r, 5);
    assert.equal(await r.image('web-a'), at(d(1)));
    assert.equal(await r.image('web-b'), at(d(1)));
    assert.equal(await r.image('web-c'), at(d(2)), 'a workload off the GM digest moves');
    const [done] = await r.rollouts();
    assert.equal(done?.state, 'Completed');

    r.edit({ gm: [] }); // a person says so: the pin is dropped
    await passes(r, 5);
    assert.equal(await r.image('web-a'), at(d(2)));
    assert.equal(await r.image('web-b'), at(d(2)));
    const repair = (await r.rollouts()).find((x) => x.repairOf === done.id);
    assert.equal(repair?.state, 'Completed');
    assert.deepEqual(Object.keys(repair.images?.units ?? {}).sort(), [
      'Deployment/shop/web-a',
      'Deployment/shop/web-b',
    ]);
  });

  it('supersedes a rollout when the tag moves again, and moves to the newer digest', async () => {
    const r = rig({
      workloads: ['web-a', 'web-b'],
      canary: false,
      policy: { policies: [{ kind: 'concurrency', limit: { count: 1 } }] },
    });
    await r.pass();
    r.push(d(2));
    await r.pass();
    r.push(d(5));
    await passes(r, 8);
    const rollouts = await r.rollouts();
    assert.deepEqual(
      rollouts.map((x) => [x.target.digest, x.state]),
      [
        [d(2), 'Superseded'],
        [d(5), 'Completed'],
      ],
    );
    assert.equal(await r.image('web-a'), at(d(5)));
    assert.equal(await r.image('web-b'), at(d(5)));
  });

  it('writes a change again when it did not land (the API was away), without a second start', async () => {
    const r = rig({ workloads: ['web-a'], canary: false });
    await r.pass();
    r.push(d(2));
    const setImages = r.workloads.setImages.bind(r.workloads);
    let refused = 1;
    r.workloads.setImages = (ref, changes) =>
      refused-- > 0 ? Promise.reject(new Error('connection refused')) : setImages(ref, changes);
    await r.pass();
    assert.equal(await r.image('web-a'), at(d(1)), 'the first write failed');
    assert.equal(nth(await r.rollouts(), 0).machines['Deployment/shop/web-a']?.phase, 'InFlight');
    await passes(r, 3);
    assert.equal(await r.image('web-a'), at(d(2)));
    assert.equal(nth(await r.rollouts(), 0).state, 'Completed');
    assert.equal((await r.store.read()).starts.length, 1, 'one start, written twice');
  });

  it('skips a unit someone else changes while it rolls out, and pauses the rollout with what it runs now', async () => {
    const r = rig({ workloads: ['web-a', 'web-b'], canary: false });
    r.workloads.unready.add(at(d(2)));
    await r.pass();
    r.push(d(2));
    await r.pass();
    r.workloads.edit(
      { kind: 'Deployment', namespace: 'shop', name: 'web-a' },
      'web',
      `${repo}:pinned`,
    );
    await r.pass();
    const ro = nth(await r.rollouts(), 0);
    assert.equal(ro.state, 'Paused');
    const unit = ro.machines['Deployment/shop/web-a'];
    assert.equal(unit?.phase, 'Skipped', 'not a failure of the image');
    assert.match(
      unit.reason ?? '',
      /^MOLT_WORKLOAD_EDITED: .*web runs registry\.lab:5000\/acme\/web:pinned/,
    );
    assert.equal(await r.image('web-a'), `${repo}:pinned`, 'the edit is kept');
  });

  it('lists nothing while it follows no image and has nothing in flight', async () => {
    const workloads = new FakeWorkloads();
    let listed = 0;
    workloads.list = () => {
      listed++;
      return Promise.resolve([]);
    };
    const store = new MemoryOperatorStore();
    const deps = {
      policies: () => [],
      workloads,
      scan: () => Promise.reject(new Error('no')),
      now: () => 0,
      store,
      log: () => undefined,
    };
    await imagePass(deps);
    assert.equal(listed, 0);
  });

  it("is left out of the machine loop: its rollouts and starts are not the machines'", async () => {
    const r = rig({ workloads: ['web-a'], canary: false });
    await r.pass();
    r.push(d(2));
    await r.pass();
    const stored = await r.store.read();
    assert.equal(stored.rollouts.length, 1);
    assert.equal(stored.starts.length, 1);
    const machines = machinePart(stored);
    assert.deepEqual([machines.rollouts.length, machines.starts.length], [0, 0]);
  });
});
