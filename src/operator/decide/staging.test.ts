// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { MachineDecision, Pool, Rollout } from '../../core/rollout/types.ts';
import type { AgentStatus } from '../../protocol/agent.ts';
import { d10, d11, idle } from './fixtures.test.ts';
import type { Observation } from './observation.ts';
import { stagingSteps, type StagingInput } from './staging.ts';

const now = Date.UTC(2026, 11, 2);
const image = `reg/molt@${d11}`;
const pool: Pool = { name: 'workers', policies: [], stage: { ahead: true, concurrency: 2 } };

const rollout = (extra: Partial<Rollout> = {}): Rollout => ({
  id: 'r-1',
  pool: 'workers',
  target: { version: '1.1.0', digest: d11 },
  state: 'Active',
  createdAt: now,
  machines: {},
  ...extra,
});

const waiting = (machine: string): MachineDecision => ({
  rollout: 'r-1',
  machine,
  action: 'wait',
  batch: 1,
  reason: { code: 'WindowClosed', message: 'outside the window' },
});

/** An agent busy with operation `id` in `phase` (Staged: written, not armed). */
const busy = (id: string, phase: AgentStatus['phase'], node = 'w-1'): AgentStatus => ({
  ...idle(d10, null, node),
  phase,
  operation: { id, kind: 'upgrade', phase, image, startedAt: new Date(now).toISOString() },
});

function steps(o: {
  rollouts?: readonly Rollout[];
  decisions?: readonly MachineDecision[];
  pools?: readonly Pool[];
  agents: Record<string, AgentStatus | undefined>;
}): string[] {
  const input: StagingInput = {
    rollouts: o.rollouts ?? [rollout()],
    decisions: o.decisions ?? Object.keys(o.agents).map(waiting),
    pools: o.pools ?? [pool],
    agent: (id): Observation | undefined => {
      const status = o.agents[id];
      return status === undefined
        ? { at: now, error: 'MOLT_AGENT_UNREACHABLE: down' }
        : { at: now, status };
    },
    now,
  };
  return stagingSteps(input).map((s) =>
    s.kind === 'discard'
      ? `discard ${s.machine} ${s.operationId}: ${s.reason}`
      : `${s.kind} ${s.machine}`,
  );
}

describe('staging ahead', () => {
  it('stages waiting machines in the plan’s order, as many as the pool’s concurrency', () => {
    const agents = {
      'w-3': idle(d10, null, 'w-3'),
      'w-1': idle(d10),
      'w-2': idle(d10, null, 'w-2'),
    };
    assert.deepEqual(steps({ agents }), ['stage w-3', 'stage w-1']);
  });

  it('skips a machine that is unreachable, busy, held, or already on the target', () => {
    const held = {
      ...idle(d10, null, 'w-3'),
      hold: {
        reason: 'disk swap',
        until: new Date(now + 3_600_000).toISOString(),
        setBy: { name: 'alice', role: 'operator' as const },
        setAt: new Date(now).toISOString(),
      },
    };
    const agents = {
      'w-1': undefined,
      'w-2': busy('op-x', 'Draining', 'w-2'),
      'w-3': held,
      'w-4': idle(d11, null, 'w-4'),
      'w-5': idle(d10, null, 'w-5'),
    };
    assert.deepEqual(steps({ agents }), ['stage w-5']);
  });

  it('counts the stagings still pulling or writing against the concurrency, not the staged ones', () => {
    const r = rollout({
      staged: {
        'w-1': { operationId: 'op-1', at: now },
        'w-2': { operationId: 'op-2', at: now },
      },
    });
    const agents = {
      'w-1': busy('op-1', 'WritingSlot'),
      'w-2': busy('op-2', 'Staged', 'w-2'),
      'w-3': idle(d10, null, 'w-3'),
      'w-4': idle(d10, null, 'w-4'),
    };
    assert.deepEqual(steps({ rollouts: [r], agents }), ['stage w-3']);
  });

  it('stages nothing for a paused rollout, one awaiting approval, a fleet rollback, or a pool that does not stage ahead', () => {
    const agents = { 'w-1': idle(d10) };
    for (const r of [
      rollout({ state: 'Paused' }),
      rollout({ state: 'AwaitingApproval' }),
      rollout({ rollbackOf: 'r-0' }),
    ])
      assert.deepEqual(steps({ rollouts: [r], agents }), [], r.state);
    const plain: Pool = { name: 'workers', policies: [] };
    assert.deepEqual(steps({ pools: [plain], agents }), []);
    const off: Pool = { ...pool, stage: { ahead: false, concurrency: 2 } };
    assert.deepEqual(steps({ pools: [off], agents }), []);
  });

  it('discards what an ended rollout staged, forgets what its agent no longer holds, and never touches a staging it did not record', () => {
    const r = rollout({
      state: 'Cancelled',
      staged: {
        'w-1': { operationId: 'op-1', at: now },
        'w-2': { operationId: 'op-2', at: now },
        'w-3': { operationId: 'op-3', at: now },
      },
    });
    const agents = {
      'w-1': busy('op-1', 'Staged'),
      'w-2': idle(d10, null, 'w-2'),
      'w-3': undefined,
      'w-4': busy('op-person', 'Staged', 'w-4'),
    };
    assert.deepEqual(steps({ rollouts: [r], decisions: [], agents }), [
      'discard w-1 op-1: rollout r-1 is Cancelled',
      'forget w-2',
    ]);
  });

  it('keeps what an active rollout staged while it waits, and counts none of it as a new candidate', () => {
    const r = rollout({ staged: { 'w-1': { operationId: 'op-1', at: now } } });
    const agents = { 'w-1': busy('op-1', 'Staged') };
    assert.deepEqual(steps({ rollouts: [r], agents }), []);
  });
});
