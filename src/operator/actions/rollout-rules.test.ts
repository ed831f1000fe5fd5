// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isMoltError } from '../../core/errors.ts';
import type { Rollout, RolloutState } from '../../core/rollout/types.ts';
import { RolloutStates } from '../../core/rollout/vocabulary.ts';
import { applyRolloutAction, type RolloutAction } from './rollout-rules.ts';

const rollout = (state: RolloutState): Rollout => ({
  id: 'r',
  pool: 'p',
  target: { version: '1.1.0', digest: 'sha256:1' },
  state,
  createdAt: 0,
  machines: { a: { phase: 'Failed' }, b: { phase: 'Succeeded' }, c: { phase: 'RolledBack' } },
});

/** The state after the action, '=' when unchanged, or the error code. */
function outcome(state: RolloutState, action: RolloutAction, force = false): string {
  try {
    const o = applyRolloutAction(rollout(state), action, { force });
    return o.changed ? o.next.state : '=';
  } catch (e) {
    assert.ok(isMoltError(e));
    return e.code;
  }
}

describe('rollout actions', () => {
  it('follow the table: every state × action', () => {
    const actions: RolloutAction[] = ['pause', 'resume', 'approve', 'cancel'];
    const table = Object.fromEntries(
      RolloutStates.map((s) => [s, actions.map((a) => outcome(s, a))]),
    );
    const refused = 'MOLT_ROLLOUT_STATE';
    assert.deepEqual(table, {
      AwaitingApproval: [refused, refused, 'Active', 'Cancelled'],
      Active: ['Paused', '=', '=', 'Cancelled'],
      Paused: ['=', 'Active', refused, 'Cancelled'],
      Halted: [refused, refused, refused, 'Cancelled'],
      Completed: [refused, refused, refused, refused],
      RolledBack: [refused, refused, refused, refused],
      Superseded: [refused, refused, refused, refused],
      Cancelled: [refused, refused, refused, '='],
    });
  });

  it('resume a halted rollout with force by putting its failures back to Pending', () => {
    const o = applyRolloutAction(rollout('Halted'), 'resume', { force: true });
    assert.equal(o.next.state, 'Active');
    assert.deepEqual(o.reset, ['a', 'c']);
    assert.deepEqual(o.next.machines, {
      a: { phase: 'Pending' },
      b: { phase: 'Succeeded' },
      c: { phase: 'Pending' },
    });
  });

  it('cancel a halted rollout without force, recording why it ended', () => {
    const o = applyRolloutAction(rollout('Halted'), 'cancel', {
      force: false,
      endReason: 'cancelled by alice: 1.2.0 is bad',
    });
    assert.equal(o.next.state, 'Cancelled');
    assert.equal(o.next.endReason, 'cancelled by alice: 1.2.0 is bad');
    assert.deepEqual(o.next.machines, rollout('Halted').machines, 'progress kept as it was');
  });

  it('keep why a rollout waits while it waits, and drop it when it runs or ends', () => {
    const paused = applyRolloutAction(rollout('Active'), 'pause', {
      force: false,
      pauseReason: 'paused by alice: freeze',
    }).next;
    assert.deepEqual([paused.state, paused.stateReason], ['Paused', 'paused by alice: freeze']);
    const resumed = applyRolloutAction(paused, 'resume', { force: false }).next;
    assert.deepEqual([resumed.state, 'stateReason' in resumed], ['Active', false]);
    const halted = { ...rollout('Halted'), stateReason: 'failure budget: 2 machines failed' };
    const retried = applyRolloutAction(halted, 'resume', { force: true }).next;
    assert.equal('stateReason' in retried, false, 'a forced resume runs again: no reason left');
    const cancelled = applyRolloutAction(halted, 'cancel', { force: false, endReason: 'x' }).next;
    assert.deepEqual([cancelled.endReason, 'stateReason' in cancelled], ['x', false]);
  });

  it('ignore force where it changes nothing, and never touch a completed rollout', () => {
    assert.equal(outcome('Paused', 'resume', true), 'Active');
    assert.equal(outcome('Completed', 'resume', true), 'MOLT_ROLLOUT_STATE');
  });
});
