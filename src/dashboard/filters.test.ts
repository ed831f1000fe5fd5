// SPDX-License-Identifier: Apache-2.0
// Filtering and grouping the fleet, with the choice kept in the URL; machines per release; the
// page's routes; and which actions a person is offered.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { DashboardMachineView } from '../protocol/operator.ts';
import { actionRequest, rolloutActions } from './actions-model.ts';
import {
  choiceFromQuery,
  choiceToQuery,
  facetValues,
  filterMachines,
  groupMachines,
} from './filters.ts';
import { releaseCounts } from './releases.ts';
import { hashOf, routeOf } from './route.ts';

const machine = (
  id: string,
  pool: string,
  o: {
    cluster?: string;
    zone?: string;
    version?: string;
    phase?: string;
    reachable?: boolean;
  } = {},
): DashboardMachineView => ({
  id,
  role: 'worker',
  pool,
  ...(o.cluster !== undefined && { cluster: o.cluster }),
  ...(o.zone !== undefined && { zone: o.zone }),
  ...(o.version !== undefined && {
    observed: {
      at: '2026-11-24T10:00:00Z',
      reachable: o.reachable ?? true,
      available: true,
      version: o.version,
      phase: o.phase ?? 'Idle',
    },
  }),
});

const fleet = [
  machine('cp-1', 'control-plane', { cluster: 'lab', zone: 'a', version: '1.1.0' }),
  machine('w-1', 'workers', { cluster: 'lab', zone: 'a', version: '1.0.0', phase: 'Pulling' }),
  machine('w-2', 'workers', { cluster: 'lab', zone: 'b', version: '1.1.0' }),
  machine('w-10', 'workers', { zone: 'b', version: '1.1.0' }),
  machine('w-3', 'workers'),
];

describe('the fleet’s filters and groups', () => {
  it('read and write the URL query, ignoring what they do not know', () => {
    const c = choiceFromQuery('?pool=workers&zone=b&group=phase&bogus=1&phase=');
    assert.deepEqual(c, { filters: { pool: 'workers', zone: 'b' }, group: 'phase' });
    assert.equal(choiceToQuery(c), '?pool=workers&zone=b&group=phase');
    assert.deepEqual(choiceFromQuery('?group=nonsense'), { filters: {}, group: 'none' });
    assert.equal(choiceToQuery({ filters: {}, group: 'none' }), '');
  });

  it('keep the machines every filter lets through', () => {
    const c = choiceFromQuery('?pool=workers&zone=b');
    assert.deepEqual(
      filterMachines(fleet, c).map((m) => m.id),
      ['w-2', 'w-10'],
    );
    const idle = choiceFromQuery('?phase=Idle&cluster=lab');
    assert.deepEqual(
      filterMachines(fleet, idle).map((m) => m.id),
      ['cp-1', 'w-2'],
    );
    const none = choiceFromQuery('?cluster=(none)');
    assert.deepEqual(
      filterMachines(fleet, none).map((m) => m.id),
      ['w-10', 'w-3'],
    );
  });

  it('offer each filter the values the fleet has, in natural order', () => {
    assert.deepEqual(facetValues(fleet, 'phase'), ['Idle', 'Pulling', 'Unknown']);
    assert.deepEqual(facetValues(fleet, 'zone'), ['(none)', 'a', 'b']);
  });

  it('group by release, groups sorted, machines in their order', () => {
    assert.deepEqual(
      groupMachines(fleet, 'release').map((g) => [g.name, g.machines.map((m) => m.id)]),
      [
        ['1.0.0', ['w-1']],
        ['1.1.0', ['cp-1', 'w-2', 'w-10']],
        ['unknown', ['w-3']],
      ],
    );
    assert.deepEqual(groupMachines(fleet, 'none'), [{ name: '', machines: fleet }]);
  });
});

describe('machines per release', () => {
  it('counts the machines booting each release, newest first and unknown last', () => {
    assert.deepEqual(releaseCounts(fleet), [
      { release: '1.1.0', machines: 3 },
      { release: '1.0.0', machines: 1 },
      { release: 'unknown', machines: 1 },
    ]);
    assert.deepEqual(
      releaseCounts([
        machine('a', 'p', { version: '1.10.0' }),
        machine('b', 'p', { version: '1.9.0' }),
      ]).map((c) => c.release),
      ['1.10.0', '1.9.0'],
    );
  });
});

describe('the page’s routes', () => {
  it('reads and writes rollout and machine pages, anything else being the fleet', () => {
    assert.deepEqual(routeOf('#/machine/w-1'), { page: 'machine', id: 'w-1' });
    assert.deepEqual(routeOf('#/rollout/workers-1.1.0%2Bx'), {
      page: 'rollout',
      id: 'workers-1.1.0+x',
    });
    assert.deepEqual(routeOf('#/login'), { page: 'login' });
    for (const h of ['', '#', '#/', '#/machine/', '#/nope/x', '#/machine/%E0%A4%A'])
      assert.deepEqual(routeOf(h), { page: 'overview' }, h);
    assert.equal(hashOf({ page: 'rollout', id: 'a/b' }), '#/rollout/a%2Fb');
  });
});

describe('the actions a person is offered', () => {
  const from = { version: '1.0.0', digest: 'sha256:0' };

  it('follows the rollout’s state, and gives viewers and anonymous readers none', () => {
    assert.deepEqual(rolloutActions({ state: 'Active', from }, 'operator'), ['pause', 'cancel']);
    assert.deepEqual(rolloutActions({ state: 'Paused', from }, 'operator'), [
      'resume',
      'cancel',
      'rollback',
    ]);
    assert.deepEqual(rolloutActions({ state: 'AwaitingApproval' }, 'admin'), ['approve', 'cancel']);
    assert.deepEqual(
      rolloutActions({ state: 'Completed' }, 'admin'),
      [],
      'nothing to roll back to',
    );
    assert.deepEqual(rolloutActions({ state: 'Superseded', from }, 'admin'), []);
    assert.deepEqual(rolloutActions({ state: 'RolledBack', from }, 'admin'), []);
    assert.deepEqual(
      rolloutActions({ state: 'Completed', from, rollbackOf: 'w-1.1.0' }, 'admin'),
      [],
      'a completed rollback is not rolled back: a new release rolls forward',
    );
    assert.deepEqual(rolloutActions({ state: 'Completed', from }, 'admin'), ['rollback']);
    assert.deepEqual(rolloutActions({ state: 'Active', from }, 'viewer'), []);
    assert.deepEqual(rolloutActions({ state: 'Active', from }, undefined), []);
  });

  it('lets only an admin retry a halted rollout’s failed machines', () => {
    assert.deepEqual(rolloutActions({ state: 'Halted', from }, 'operator'), ['cancel', 'rollback']);
    assert.deepEqual(rolloutActions({ state: 'Halted', from }, 'admin'), [
      'force-resume',
      'cancel',
      'rollback',
    ]);
    assert.deepEqual(actionRequest('r 1', 'force-resume', 'x'), {
      path: '/v1/rollouts/r%201/resume',
      body: { force: true, reason: 'x' },
    });
  });

  it('sends the person’s reason with every action, and only when given', () => {
    assert.deepEqual(actionRequest('r', 'pause', '  disk alarms '), {
      path: '/v1/rollouts/r/pause',
      body: { reason: 'disk alarms' },
    });
    assert.deepEqual(actionRequest('r', 'cancel', ' '), {
      path: '/v1/rollouts/r/cancel',
      body: {},
    });
    assert.deepEqual(actionRequest('r', 'approve', 'why'), {
      path: '/v1/rollouts/r/approve',
      body: { reason: 'why' },
    });
    assert.deepEqual(actionRequest('r', 'resume', ' fixed the disk '), {
      path: '/v1/rollouts/r/resume',
      body: { reason: 'fixed the disk' },
    });
  });
});
