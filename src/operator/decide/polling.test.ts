// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import type { Rollout } from '../../core/rollout/types.ts';
import type { AgentStatus } from '../../protocol/agent.ts';
import type { Observation } from './observation.ts';
import {
  machinesToPoll,
  resyncPeriod,
  startsToConfirm,
  type PollInput,
  type StreamState,
} from './polling.ts';

const idle = {
  phase: 'Idle',
  bootedSlot: 'a',
  boot: { committed: 'a' },
  slots: [],
  version: null,
} as unknown as AgentStatus;
const busy = { ...idle, phase: 'Downloading' };
const RESYNC = 60_000;
const NOW = 1_000_000;

const rollout = (machines: Rollout['machines']): Rollout => ({
  id: 'r',
  pool: 'p',
  target: { version: '1', digest: 'sha256:x' },
  state: 'Active',
  createdAt: 0,
  machines,
});

/** Every machine observed idle 1 s ago, stream open, nothing reported since it was asked. */
const quiet = (ids: string[], over: Partial<PollInput> = {}): PollInput => ({
  machines: ids,
  rollouts: [],
  previous: new Map(ids.map((id) => [id, { at: NOW - 1_000, status: idle }])),
  askedAt: new Map(ids.map((id) => [id, 3])),
  stream: () => ({ open: true, changes: 3 }),
  now: NOW,
  resyncMs: RESYNC,
  ...over,
});

describe('machinesToPoll', () => {
  it('asks nobody whose stream is open and quiet and whose observation is recent', () => {
    assert.deepEqual([...machinesToPoll(quiet(['a', 'b', 'c']))], []);
  });

  it('asks in-flight, never seen, failed, busy, changed, disconnected and untracked machines', () => {
    const ids = ['flight', 'new', 'err', 'busy', 'changed', 'closed', 'untracked', 'quiet'];
    const base = quiet(ids);
    const previous = new Map<string, Observation>(base.previous);
    previous.delete('new');
    previous.set('err', { at: NOW - 1_000, error: 'MOLT_AGENT_UNREACHABLE: gone' });
    previous.set('busy', { at: NOW - 1_000, status: busy });
    const streams: Record<string, StreamState | undefined> = {
      changed: { open: true, changes: 4 },
      closed: { open: false, changes: 3 },
      untracked: undefined,
    };
    const polled = machinesToPoll({
      ...base,
      previous,
      rollouts: [
        rollout({ flight: { phase: 'InFlight', startedAt: 1 }, quiet: { phase: 'Succeeded' } }),
      ],
      stream: (id) => (id in streams ? streams[id] : { open: true, changes: 3 }),
    });
    assert.deepEqual([...polled].sort(), ids.filter((id) => id !== 'quiet').sort());
  });

  it('asks a quiet machine again once its resync period passed, spread over [resync/2, resync)', () => {
    const ids = Array.from({ length: 2_000 }, (_, k) => `m-${String(k)}`);
    const periods = ids.map((id) => resyncPeriod(id, RESYNC));
    assert.ok(periods.every((p) => p >= RESYNC / 2 && p < RESYNC));
    // Observed all at once (a first pass): they fall due over the half interval, not in one pass.
    const at = (t: number): number =>
      machinesToPoll(
        quiet(ids, {
          previous: new Map(ids.map((id) => [id, { at: NOW - t, status: idle }])),
        }),
      ).size;
    assert.equal(at(RESYNC / 2 - 1), 0);
    assert.equal(at(RESYNC), ids.length);
    const tenth = at(RESYNC / 2 + RESYNC / 20);
    assert.ok(tenth > 100 && tenth < 300, `${String(tenth)} due after 10 % of the spread`);
  });

  it('never keeps an observation that is failed, busy, in flight, older than resync, or unquiet', () => {
    const obs = fc.option(
      fc.record({
        age: fc.integer({ min: 0, max: 2 * RESYNC }),
        status: fc.constantFrom(idle, busy, undefined),
      }),
      { nil: undefined },
    );
    const machineArb = fc.record({
      obs,
      stream: fc.option(fc.record({ open: fc.boolean(), changes: fc.nat(3) }), { nil: undefined }),
      askedAt: fc.option(fc.nat(3), { nil: undefined }),
      inFlight: fc.boolean(),
    });
    fc.assert(
      fc.property(fc.array(machineArb, { maxLength: 20 }), (ms) => {
        const ids = ms.map((_, k) => `m${String(k)}`);
        const previous = new Map<string, Observation>();
        const askedAt = new Map<string, number>();
        ms.forEach((m, k) => {
          if (m.obs !== undefined)
            previous.set(ids[k]!, {
              at: NOW - m.obs.age,
              ...(m.obs.status === undefined ? { error: 'x' } : { status: m.obs.status }),
            });
          if (m.askedAt !== undefined) askedAt.set(ids[k]!, m.askedAt);
        });
        const flights = Object.fromEntries(
          ids
            .filter((_, k) => ms[k]!.inFlight)
            .map((id) => [id, { phase: 'InFlight' as const, startedAt: 1 }]),
        );
        const polled = machinesToPoll({
          machines: ids,
          rollouts: [rollout(flights)],
          previous,
          askedAt,
          stream: (id) => ms[ids.indexOf(id)]!.stream,
          now: NOW,
          resyncMs: RESYNC,
        });
        ms.forEach((m, k) => {
          const id = ids[k]!;
          const kept = !polled.has(id);
          if (!kept) return;
          assert.ok(
            !m.inFlight && m.obs?.status === idle,
            `${id} kept while in flight or not idle`,
          );
          assert.ok(m.obs.age < RESYNC, `${id} kept past its resync`);
          assert.ok(m.stream?.open === true && m.stream.changes === m.askedAt, `${id} not quiet`);
        });
      }),
    );
  });
});

describe('startsToConfirm', () => {
  it('names the machines a plan would start that were not asked this pass, once each', () => {
    const decisions = [
      { action: 'start', machine: 'a' },
      { action: 'start', machine: 'b' },
      { action: 'wait', machine: 'c' },
      { action: 'start', machine: 'b' },
    ];
    assert.deepEqual(startsToConfirm(decisions, new Set(['a'])), ['b']);
  });
});
