// SPDX-License-Identifier: Apache-2.0
// Cluster API's UpdateMachine as molt answers it (docs/adr/0014): the release carrying the desired
// Kubernetes version, one targeted rollout recorded once, and the answer read from it.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { plan } from '../../core/rollout/plan.ts';
import type { Pool, Rollout } from '../../core/rollout/types.ts';
import { capiRolloutId, capiUpdate, type CapiUpdateInput } from './capi-update.ts';
import { d10, d11, release, w1 } from './fixtures.test.ts';

const pool: Pool = { name: 'workers', channel: 'stable', policies: [] };
const carrying = (v: string, k: string, digest: string) => ({
  ...release(v, digest),
  kubernetesVersion: k,
});
const releases = [carrying('1.1.0', 'v1.35.0', d11), carrying('1.0.0', 'v1.34.2', d10)];

const input = (over: Partial<CapiUpdateInput> = {}): CapiUpdateInput => ({
  machine: w1,
  version: 'v1.35.0',
  pool,
  releases,
  rollouts: [],
  blocks: [],
  booted: d10,
  now: 1_000,
  ...over,
});

const recorded = (over: Partial<Rollout> = {}): Rollout => {
  const r = capiUpdate(input()).create;
  assert.ok(r);
  return { ...r, ...over };
};

describe('capiUpdate', () => {
  it('records one targeted rollout of the machine to the release carrying the version', () => {
    const out = capiUpdate(input());
    assert.equal(out.answer.state, 'in-progress');
    assert.deepEqual(out.create, {
      id: capiRolloutId('w-1', 'v1.35.0'),
      pool: 'workers',
      target: { version: '1.1.0', digest: d11 },
      state: 'Active',
      createdAt: 1_000,
      machines: {},
      only: ['w-1'],
    });
  });

  it('creates nothing when asked again, and says where the machine is', () => {
    const r = recorded();
    const again = capiUpdate(input({ rollouts: [r] }));
    assert.equal(again.create, undefined);
    assert.match(again.answer.message, /waiting for the pool's policies/);
    const flying = recorded({ machines: { 'w-1': { phase: 'InFlight', startedAt: 1 } } });
    assert.match(capiUpdate(input({ rollouts: [flying] })).answer.message, /^upgrading to 1\.1\.0/);
  });

  it('is done once the machine succeeded and its agent booted on the release', () => {
    const done = recorded({
      machines: { 'w-1': { phase: 'Succeeded', startedAt: 1, finishedAt: 2 } },
    });
    assert.equal(capiUpdate(input({ rollouts: [done] })).answer.state, 'in-progress');
    assert.deepEqual(capiUpdate(input({ rollouts: [done], booted: d11 })).answer, {
      state: 'done',
      message: 'booted on 1.1.0',
    });
  });

  it('fails, saying so, when the machine rolled back by itself', () => {
    const back = recorded({
      machines: {
        'w-1': { phase: 'RolledBack', startedAt: 1, finishedAt: 2, reason: 'kubelet not ready' },
      },
    });
    assert.deepEqual(capiUpdate(input({ rollouts: [back] })).answer, {
      state: 'failed',
      message: 'w-1 failed on 1.1.0 and rolled back by itself: kubelet not ready',
      machineFailed: true,
    });
  });

  it('fails without changing anything for an unknown machine, a version no release carries, or a blocked one', () => {
    assert.deepEqual(capiUpdate(input({ machine: undefined })), {
      answer: { state: 'failed', message: 'not a machine molt manages' },
    });
    const none = capiUpdate(input({ version: 'v1.36.0' }));
    assert.equal(none.create, undefined);
    assert.match(none.answer.message, /no release of channel stable carries Kubernetes v1\.36\.0/);
    assert.equal(none.answer.machineFailed, undefined, 'not the machine’s failure');
    const blocked = capiUpdate(
      input({ blocks: [{ digest: d11, reason: 'bad', by: 'alice', at: 1 }] }),
    );
    assert.equal(blocked.answer.state, 'failed');
  });

  it('is done at once for a machine already on the release', () => {
    const out = capiUpdate(input({ booted: d11 }));
    assert.deepEqual([out.answer.state, out.create], ['done', undefined]);
  });

  it('plans only the targeted machine of its pool', () => {
    const r = recorded();
    const machines = ['w-1', 'w-2'].map((id) => ({
      id,
      role: 'worker' as const,
      pool: 'workers',
      labels: {},
      digest: d10,
      version: '1.0.0',
      available: true,
    }));
    const p = plan(
      { machines, pools: [pool], fleetPolicies: [], rollouts: [r], starts: [] },
      1_000,
    );
    assert.deepEqual(p.decisions.map((d) => [d.machine, d.action]).sort(), [
      ['w-1', 'start'],
      ['w-2', 'skipped'],
    ]);
  });
});
