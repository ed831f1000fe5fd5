// SPDX-License-Identifier: Apache-2.0
import { KubePlanPhases } from '../../core/kubernetes/types.ts';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MachinePhases, RolloutStates } from '../../core/rollout/vocabulary.ts';
import { DecisionNotificationActions, NotificationKinds } from '../../protocol/notifications.ts';
import { machineFixture, rolloutFixture } from '../../testkit/operator-store-fixtures.ts';
import type { HistoryEvent } from '../ports/store.ts';
import { notificationKind, notificationOf } from './notification.ts';

const e = (over: Partial<HistoryEvent>): HistoryEvent => ({
  seq: 9,
  at: Date.parse('2026-11-26T08:00:00Z'),
  kind: 'warning',
  message: 'm',
  ...over,
});

describe('history events as notifications', () => {
  it('gives every event the operator records a kind the config can name', () => {
    const kinds = [
      ...RolloutStates.map((state) =>
        notificationKind(e({ kind: 'rollout-state', data: { state } })),
      ),
      ...MachinePhases.filter((p) => p !== 'Pending' && p !== 'InFlight').map((phase) =>
        notificationKind(e({ kind: 'machine-result', data: { phase } })),
      ),
      ...DecisionNotificationActions.map((action) =>
        notificationKind(e({ kind: 'decision', data: { action } })),
      ),
      ...(
        ['rollout-created', 'machine-start', 'machine-rollback', 'warning', 'kube-step'] as const
      ).map((kind) => notificationKind(e({ kind }))),
      ...KubePlanPhases.map((phase) => notificationKind(e({ kind: 'kube-plan', data: { phase } }))),
    ];
    assert.deepEqual([...kinds].sort(), [...NotificationKinds].sort());
    assert.equal(
      notificationKind(e({ kind: 'rollout-state', data: { state: 'Paused' } })),
      'rollout.paused',
    );
    assert.equal(
      notificationKind(e({ kind: 'rollout-state', data: { state: 'AwaitingApproval' } })),
      'rollout.awaiting-approval',
    );
    assert.equal(
      notificationKind(e({ kind: 'machine-result', data: { phase: 'RolledBack' } })),
      'machine.rolled-back',
    );
    assert.equal(
      notificationKind(e({ kind: 'kube-plan', data: { phase: 'RollingBack' } })),
      'kubernetes.rolling-back',
    );
  });

  it('tells the pool and release of the rollout, or the machine’s pool, the reason and who', () => {
    const context = { rollouts: [rolloutFixture('r1')], machines: [machineFixture('w-9')] };
    const paused = notificationOf(
      e({
        kind: 'rollout-state',
        rollout: 'r1',
        data: { state: 'Paused', by: 'alice', reason: 'disk swap' },
      }),
      context,
    );
    assert.deepEqual(
      [paused.kind, paused.pool, paused.release?.version, paused.by, paused.reason, paused.at],
      ['rollout.paused', 'workers', '2.0.0', 'alice', 'disk swap', '2026-11-26T08:00:00.000Z'],
    );
    const hold = notificationOf(
      e({ kind: 'decision', machine: 'w-9', data: { action: 'hold', by: 'bob' } }),
      context,
    );
    assert.deepEqual(
      [hold.kind, hold.pool, hold.release, hold.by],
      ['decision.hold', 'workers', undefined, 'bob'],
    );
    assert.equal(notificationOf(e({}), context).by, 'operator');
  });

  it('ids an event the same way every time, and two events differently', () => {
    const c = { rollouts: [], machines: [] };
    assert.equal(notificationOf(e({}), c).id, notificationOf(e({}), c).id);
    assert.match(notificationOf(e({}), c).id, /^molt-9-[0-9a-f]{16}$/);
    assert.notEqual(notificationOf(e({}), c).id, notificationOf(e({ seq: 10 }), c).id);
    assert.notEqual(notificationOf(e({}), c).id, notificationOf(e({ message: 'n' }), c).id);
  });
});
