// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { HoldView } from '../../protocol/agent-hold.ts';
import { effectiveHold, holdStep } from './holds.ts';

const T0 = Date.parse('2026-11-24T10:00:00Z');
const HOUR = 3_600_000;
const stored = { reason: 'disk swap', until: T0 + HOUR, by: 'alice' };
const pushed = (patch: Partial<HoldView> = {}): HoldView => ({
  reason: 'disk swap',
  until: new Date(T0 + HOUR).toISOString(),
  setBy: { name: 'operator', role: 'operator' },
  onBehalfOf: 'alice',
  setAt: new Date(T0).toISOString(),
  ...patch,
});
const direct: HoldView = {
  reason: 'bios update',
  until: new Date(T0 + 2 * HOUR).toISOString(),
  setBy: { name: 'root', role: 'admin' },
  setAt: new Date(T0).toISOString(),
};

describe('the operator’s holds on the agents', () => {
  it('pushes an unexpired stored hold to an agent that keeps none, for the person who held it', () => {
    assert.deepEqual(holdStep(stored, null, T0), {
      kind: 'set',
      hold: { reason: 'disk swap', until: T0 + HOUR, onBehalfOf: 'alice' },
    });
  });

  it('never pushes a pin (the agent would refuse the pinned release too), and clears its old hold', () => {
    const pin = { ...stored, version: '1.2.0' };
    assert.deepEqual(holdStep(pin, null, T0), { kind: 'none' });
    assert.deepEqual(holdStep(pin, pushed(), T0), { kind: 'clear' });
    assert.equal(effectiveHold(pin, null), undefined, 'a pin is no hold to the planner');
  });

  it('leaves the agent alone once it keeps the same hold', () => {
    assert.deepEqual(holdStep(stored, pushed(), T0), { kind: 'none' });
  });

  it('replaces its own hold on the agent when the stored one changed', () => {
    for (const changed of [
      pushed({ reason: 'old reason' }),
      pushed({ until: new Date(T0 + 2 * HOUR).toISOString() }),
      pushed({ onBehalfOf: 'bob' }),
    ])
      assert.equal(holdStep(stored, changed, T0).kind, 'set');
  });

  it('clears its own hold on the agent once the store has none, or it ended', () => {
    assert.deepEqual(holdStep(undefined, pushed(), T0), { kind: 'clear' });
    assert.deepEqual(holdStep(stored, pushed(), T0 + HOUR), { kind: 'clear' });
    assert.deepEqual(holdStep(undefined, null, T0), { kind: 'none' });
    assert.deepEqual(holdStep(stored, null, T0 + HOUR), { kind: 'none' });
  });

  it('never replaces or clears a hold set on the agent directly', () => {
    assert.deepEqual(holdStep(undefined, direct, T0), { kind: 'none' });
    assert.deepEqual(holdStep(stored, direct, T0), { kind: 'none' });
  });

  it('pushes nothing to an agent that did not answer, or keeps no holds (older than holds)', () => {
    assert.deepEqual(holdStep(stored, undefined, T0), { kind: 'none' });
  });

  it('has the planner wait for whichever of the stored and the agent’s hold ends later', () => {
    assert.deepEqual(effectiveHold(undefined, null), undefined);
    assert.deepEqual(effectiveHold(undefined, direct), {
      reason: 'bios update',
      until: T0 + 2 * HOUR,
    });
    assert.deepEqual(effectiveHold(stored, direct), {
      reason: 'bios update',
      until: T0 + 2 * HOUR,
    });
    assert.deepEqual(effectiveHold(stored, pushed()), { reason: 'disk swap', until: T0 + HOUR });
    assert.deepEqual(effectiveHold(stored, undefined), { reason: 'disk swap', until: T0 + HOUR });
  });
});
