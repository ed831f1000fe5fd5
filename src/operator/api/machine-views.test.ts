// SPDX-License-Identifier: Apache-2.0
// A machine that stops answering while the operator upgrades it is rebooting, not lost; the zone
// the dashboard groups by is the one the pool's zones policy orders by.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RebootGraceMs } from '../../protocol/operator.ts';
import { sampleStatus } from '../../agent/api/service.fake.ts';
import { machineColumns } from '../../protocol/operator-columns.ts';
import { isRebooting, machineView, machineZone } from './machine-views.ts';

const now = 1_000_000;
const away = { at: now, error: 'MOLT_AGENT_UNREACHABLE: connect ECONNREFUSED' };
const idle = { at: now - 5_000, status: sampleStatus() };
const busy = {
  at: now - 5_000,
  status: {
    ...sampleStatus(),
    phase: 'Rebooting',
    operation: { id: 'op-1', kind: 'upgrade' as const, phase: 'Rebooting', startedAt: '' },
  },
};

describe('a rebooting machine', () => {
  it('is one the operator is upgrading that does not answer', () => {
    assert.equal(isRebooting({ observation: away, lastAnswer: idle, inFlight: true, now }), true);
    assert.equal(
      isRebooting({ observation: away, lastAnswer: undefined, inFlight: true, now }),
      true,
    );
  });

  it('is one whose last answer named an operation, for a while', () => {
    const clues = { observation: away, lastAnswer: busy, inFlight: false };
    assert.equal(isRebooting({ ...clues, now }), true);
    assert.equal(isRebooting({ ...clues, now: busy.at + RebootGraceMs + 1 }), false);
  });

  it('is not one that answers, nor one lost while idle', () => {
    assert.equal(isRebooting({ observation: busy, lastAnswer: busy, inFlight: true, now }), false);
    assert.equal(isRebooting({ observation: away, lastAnswer: idle, inFlight: false, now }), false);
    assert.equal(
      isRebooting({ observation: undefined, lastAnswer: busy, inFlight: true, now }),
      false,
    );
  });
});

describe('a machine’s zone', () => {
  const m = (labels: Record<string, string>) => ({
    id: 'w-1',
    endpoint: 'https://w-1:7443',
    role: 'worker' as const,
    pool: 'workers',
    labels,
  });
  const fleet = (label?: string) => ({
    pools: [
      {
        name: 'workers',
        policies: label === undefined ? [] : [{ kind: 'zones' as const, label }],
      },
    ],
    fleetPolicies: [],
  });

  it('is the label its pool’s zones policy orders by, else zone or the Kubernetes label', () => {
    assert.equal(machineZone(m({ rack: 'r7', zone: 'a' }), fleet('rack')), 'r7');
    assert.equal(machineZone(m({ zone: 'a' }), fleet()), 'a');
    assert.equal(machineZone(m({ 'topology.kubernetes.io/zone': 'eu-1b' }), fleet()), 'eu-1b');
    assert.equal(machineZone(m({}), fleet()), undefined);
  });
});

describe('molt machine list', () => {
  it('says rebooting, not unreachable, for a machine the operator expects back', () => {
    const state = machineColumns.find((c) => c.header === 'STATE');
    const view = (rebooting: boolean) =>
      machineView(
        { id: 'w-1', endpoint: 'https://w-1:7443', role: 'worker', pool: 'workers', labels: {} },
        { hold: undefined, observation: away, rebooting },
      );
    assert.equal(state?.value(view(true), 0), 'rebooting');
    assert.equal(state.value(view(false), 0), 'unreachable');
  });
});
