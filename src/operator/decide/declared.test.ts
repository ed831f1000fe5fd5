// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Pool, Rollout } from '../../core/rollout/types.ts';
import type { DeclaredState } from '../ports/declared.ts';
import type { Hold, StoredState } from '../ports/store.ts';
import {
  declaredPools,
  deletions,
  Forever,
  requestedActions,
  type DeclaredInput,
} from './declared.ts';
import { declaredHolds } from './declared-holds.ts';
import { inventory } from './declared-inventory.ts';
import { worker as machine } from './fixtures.test.ts';

/** Everything the objects ask of one pass, as the controllers of `loop/declared/` carry it out. */
function planDeclared(i: DeclaredInput) {
  const pools = declaredPools(i);
  const held = declaredHolds(i);
  return {
    ...pools,
    inventory: inventory(i),
    verdicts: [...pools.verdicts, ...held.verdicts],
    holds: held.changes,
    actions: [...deletions(i), ...requestedActions(i)],
  };
}

const rollout = (id: string, pool: string, over: Partial<Rollout> = {}): Rollout => ({
  id,
  pool,
  target: { version: '1.1.0', digest: 'sha256:b' },
  state: 'Active',
  createdAt: 0,
  machines: {},
  ...over,
});

const stored = (over: Partial<StoredState> = {}): StoredState => ({
  machines: [machine('w-1', 'workers'), machine('w-2', 'workers')],
  rollouts: [],
  starts: [],
  holds: {},
  blocks: [],
  ...over,
});

const workers: Pool = { name: 'workers', channel: 'stable', policies: [] };

function input(declared: Partial<DeclaredState>, over: Partial<DeclaredInput> = {}) {
  return {
    declared: { pools: [], holds: [], requests: [], ...declared },
    filePools: [],
    fileMachines: new Set<string>(),
    stored: stored(),
    lastAccepted: new Map<string, Pool>(),
    objectName: (id: string) => id,
    now: 1_000,
    ...over,
  };
}

describe('declared pools', () => {
  it('adds an accepted pool and says what it follows', () => {
    const p = planDeclared(
      input({ pools: [{ name: 'workers', pool: workers, generation: 2, deleting: false }] }),
    );
    assert.deepEqual(p.pools, [workers]);
    assert.equal(p.accepted.get('workers'), workers);
    const [v] = p.verdicts;
    assert.ok(v !== undefined);
    assert.equal(v.accepted, true);
    assert.equal(v.generation, 2);
    assert.match(v.message, /follows channel stable/);
    assert.deepEqual(v.status, { machines: 2, rollout: null }, 'no running rollout: cleared');
  });

  it('names the pool’s running rollout in its status, not an ended one', () => {
    const p = planDeclared(
      input(
        { pools: [{ name: 'workers', pool: workers, generation: 1, deleting: false }] },
        {
          stored: stored({
            rollouts: [
              rollout('done', 'workers', { state: 'Completed' }),
              rollout('halted', 'workers', { state: 'Halted' }),
            ],
          }),
        },
      ),
    );
    assert.deepEqual(p.verdicts[0]?.status, { machines: 2, rollout: 'halted' });
  });

  it('leaves a pool the fleet file defines to the file, and says so', () => {
    const file: Pool = { name: 'workers', channel: 'beta', policies: [] };
    const p = planDeclared(
      input(
        { pools: [{ name: 'workers', pool: workers, generation: 1, deleting: false }] },
        { filePools: [file] },
      ),
    );
    assert.deepEqual(p.pools, [file]);
    assert.equal(p.verdicts[0]?.reason, 'DefinedInFleetFile');
  });

  it('keeps the last accepted spec when a new one is refused', () => {
    const p = planDeclared(
      input(
        {
          pools: [
            { name: 'workers', invalid: 'spec.channel: bad', generation: 3, deleting: false },
          ],
        },
        { lastAccepted: new Map([['workers', workers]]) },
      ),
    );
    assert.deepEqual(p.pools, [workers]);
    assert.equal(p.verdicts[0]?.accepted, false);
    assert.match(p.verdicts[0].message, /spec\.channel: bad; the last accepted spec stays/);
  });

  it('freezes a pool never accepted (nothing starts) instead of leaving it without policies', () => {
    const p = planDeclared(
      input({ pools: [{ name: 'workers', invalid: 'x', generation: 1, deleting: false }] }),
    );
    assert.deepEqual(p.pools, [
      { name: 'workers', policies: [{ kind: 'concurrency', limit: { count: 0 } }] },
    ]);
    assert.match(p.verdicts[0]?.message ?? '', /nothing starts/);
  });

  it('cancels a deleted pool’s rollouts and lets the deletion through only when nothing is in flight', () => {
    const busy = rollout('r1', 'workers', {
      machines: { 'w-1': { phase: 'InFlight', operationId: 'op' } },
    });
    const deleting = { name: 'workers', pool: workers, generation: 1, deleting: true };
    const first = planDeclared(
      input({ pools: [deleting] }, { stored: stored({ rollouts: [busy] }) }),
    );
    assert.equal(first.pools[0]?.channel, undefined, 'follows nothing new');
    assert.deepEqual(
      first.actions.map((a) => [a.rollout, a.action]),
      [['r1', 'cancel']],
    );
    assert.deepEqual(first.release, []);
    const done = rollout('r1', 'workers', {
      state: 'Cancelled',
      machines: { 'w-1': { phase: 'Succeeded' } },
    });
    const then = planDeclared(
      input({ pools: [deleting] }, { stored: stored({ rollouts: [done] }) }),
    );
    assert.deepEqual(then.actions, []);
    assert.deepEqual(then.release, ['workers']);
  });
});

describe('rollout actions from a Rollout spec, by level', () => {
  const ask = (state: Rollout['state'], fields: object, rollouts: Rollout[] = []) =>
    planDeclared(
      input(
        { requests: [{ rollout: 'r1', by: 'kubernetes:kubectl-patch', ...fields }] },
        { stored: stored({ rollouts: [rollout('r1', 'workers', { state }), ...rollouts] }) },
      ),
    ).actions.map((a) => a.action);

  it('pauses an Active rollout and resumes a Paused one', () => {
    assert.deepEqual(ask('Active', { paused: true }), ['pause']);
    assert.deepEqual(ask('Paused', { paused: true }), []);
    assert.deepEqual(ask('Paused', { paused: false }), ['resume']);
    assert.deepEqual(ask('Active', { paused: false }), []);
    assert.deepEqual(ask('Halted', { paused: false }), [], 'a halted rollout needs an admin');
  });

  it('approves, cancels, and rolls back (pausing an Active rollout first) once', () => {
    assert.deepEqual(ask('AwaitingApproval', { approved: true }), ['approve']);
    assert.deepEqual(ask('Active', { approved: true }), []);
    assert.deepEqual(ask('Paused', { cancelled: true }), ['cancel']);
    assert.deepEqual(ask('Cancelled', { cancelled: true }), []);
    assert.deepEqual(ask('Active', { rollback: true }), ['pause', 'rollback']);
    assert.deepEqual(ask('Paused', { rollback: true }, [rollout('r1-rollback', 'workers')]), []);
  });

  it('names the field and who set it', () => {
    const [a] = planDeclared(
      input(
        { requests: [{ rollout: 'r1', by: 'kubernetes:argocd', paused: true }] },
        { stored: stored({ rollouts: [rollout('r1', 'workers')] }) },
      ),
    ).actions;
    assert.equal(a?.by, 'kubernetes:argocd');
    assert.equal(a.reason, 'spec.paused of Rollout r1');
  });

  it('ignores objects of rollouts the store does not have', () => {
    assert.deepEqual(
      planDeclared(input({ requests: [{ rollout: 'gone', by: 'x', paused: true }] })).actions,
      [],
    );
  });
});

describe('declared holds', () => {
  const hold = (name: string, m: string, until?: number) => ({
    name,
    machine: m,
    reason: 'disk check',
    generation: 1,
    ...(until !== undefined && { until }),
  });

  it('holds the machine until the object is deleted, then releases it', () => {
    const p = planDeclared(input({ holds: [hold('h1', 'w-1')] }));
    assert.deepEqual(p.holds, [
      {
        machine: 'w-1',
        hold: { reason: 'disk check', until: Forever, by: 'kubernetes:MachineHold/h1' },
      },
    ]);
    const held: Record<string, Hold> = { 'w-1': p.holds[0]?.hold as Hold };
    assert.deepEqual(
      planDeclared(input({ holds: [hold('h1', 'w-1')] }, { stored: stored({ holds: held }) }))
        .holds,
      [],
    );
    assert.deepEqual(planDeclared(input({}, { stored: stored({ holds: held }) })).holds, [
      { machine: 'w-1', hold: undefined },
    ]);
  });

  it('leaves a person’s hold alone, and refuses unknown machines and bad specs', () => {
    const person: Record<string, Hold> = { 'w-1': { reason: 'mine', until: 5_000, by: 'alice' } };
    const p = planDeclared(
      input(
        {
          holds: [
            hold('h1', 'w-1'),
            hold('h2', 'nope'),
            { name: 'h3', invalid: 'spec.reason: must say why', generation: 4 },
          ],
        },
        { stored: stored({ holds: person }) },
      ),
    );
    assert.deepEqual(p.holds, []);
    assert.deepEqual(
      p.verdicts.map((v) => [v.name, v.accepted, v.reason]),
      [
        ['h1', true, 'Held'],
        ['h2', false, 'UnknownMachine'],
        ['h3', false, 'InvalidSpec'],
      ],
    );
    assert.match(p.verdicts[0]?.message ?? '', /also held by alice/);
  });

  it('pins a machine to a release with spec.version', () => {
    const p = planDeclared(input({ holds: [{ ...hold('pin', 'w-1'), version: '1.2.0' }] }));
    assert.deepEqual(p.holds, [
      {
        machine: 'w-1',
        hold: {
          reason: 'disk check',
          until: Forever,
          by: 'kubernetes:MachineHold/pin',
          version: '1.2.0',
        },
      },
    ]);
    assert.deepEqual(
      p.verdicts.map((v) => [v.reason, v.message]),
      [['Pinned', 'w-1 stays on 1.2.0']],
    );
  });

  it('says when a hold has ended', () => {
    const p = planDeclared(input({ holds: [hold('h1', 'w-1', 500)] }));
    assert.equal(p.verdicts[0]?.reason, 'Expired');
  });
});

describe('machines from Nodes', () => {
  const fromNode = (id: string, pool = 'workers') => ({
    machine: { ...machine(id, pool), fromNode: true },
  });

  it('writes new and changed ones, leaves the file’s and the unchanged alone, says why a Node is none', () => {
    const known = { ...machine('w-1', 'workers'), fromNode: true };
    const p = planDeclared(
      input(
        {
          machines: [
            fromNode('w-1'),
            fromNode('w-2', 'edge'),
            fromNode('w-3'),
            { node: 'w-4', skipped: 'no molt.dev/agent-endpoint annotation' },
          ],
        },
        { fileMachines: new Set(['w-3']), stored: stored({ machines: [known] }) },
      ),
    );
    assert.deepEqual(
      p.inventory.put.map((m) => [m.id, m.pool]),
      [['w-2', 'edge']],
    );
    assert.deepEqual(p.inventory.remove, []);
    assert.deepEqual(p.inventory.skipped, [
      { node: 'w-4', skipped: 'no molt.dev/agent-endpoint annotation' },
    ]);
  });

  it('removes a machine whose Node is gone, but not while it is in flight', () => {
    const gone = { ...machine('w-9', 'workers'), fromNode: true };
    const registered = { ...machine('w-8', 'workers'), registered: true };
    const base = { machines: [gone, registered] };
    assert.deepEqual(
      planDeclared(input({ machines: [] }, { stored: stored(base) })).inventory.remove,
      ['w-9'],
    );
    const busy = rollout('r1', 'workers', {
      machines: { 'w-9': { phase: 'InFlight', operationId: 'op' } },
    });
    assert.deepEqual(
      planDeclared(input({ machines: [] }, { stored: stored({ ...base, rollouts: [busy] }) }))
        .inventory.remove,
      [],
    );
    assert.deepEqual(
      planDeclared(input({}, { stored: stored(base) })).inventory.remove,
      [],
      'not taking machines from Nodes removes nothing',
    );
  });
});
