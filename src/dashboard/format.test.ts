// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { emptyCounts, type MachineView, type RolloutCounts } from '../protocol/operator.ts';
import {
  barParts,
  batchLabel,
  countsLine,
  health,
  isWaiting,
  phaseOf,
  pageReason,
  resultLabel,
  rolloutHeading,
  slotText,
  stateLabel,
} from './format.ts';

type Observed = NonNullable<MachineView['observed']>;

const machine = (observed?: Partial<Observed>, extra: Partial<MachineView> = {}): MachineView => ({
  id: 'w-1',
  endpoint: 'https://w-1.lab:7443',
  role: 'worker',
  pool: 'workers',
  labels: {},
  ...(observed !== undefined && {
    observed: { at: '2026-11-24T10:00:00Z', reachable: true, available: true, ...observed },
  }),
  ...extra,
});

const counts = (c: Partial<RolloutCounts>): RolloutCounts => emptyCounts(0, c);

describe('health', () => {
  it('says held before anything else, and unknown before the first observation', () => {
    const hold = { reason: 'bios', until: '2026-11-25T00:00:00Z' };
    assert.equal(health(machine({ reachable: false }, { hold })), 'held');
    assert.equal(health(machine()), 'unknown');
  });

  it('says unreachable, then failed on a failed last result', () => {
    assert.equal(health(machine({ reachable: false, last: { result: 'Failed' } })), 'unreachable');
    assert.equal(health(machine({ last: { result: 'Failed', reason: 'boom' } })), 'failed');
  });

  it('says verifying on a trial boot and healthy once the booted slot is committed', () => {
    assert.equal(health(machine({ bootedSlot: 'B', committedSlot: 'A' })), 'verifying');
    assert.equal(health(machine({ bootedSlot: 'B', committedSlot: null })), 'verifying');
    assert.equal(health(machine({ bootedSlot: 'B', committedSlot: 'B' })), 'healthy');
    assert.equal(health(machine({ last: { result: 'RolledBack' } })), 'healthy');
  });
});

describe('a rebooting machine', () => {
  it('says rebooting, not unreachable, when the operator expects the reboot — held or not', () => {
    const away = { reachable: false, rebooting: true };
    assert.equal(health(machine(away)), 'rebooting');
    assert.equal(phaseOf(machine(away)), 'Rebooting');
    const hold = { reason: 'bios', until: '2026-11-25T00:00:00Z' };
    assert.equal(health(machine(away, { hold })), 'rebooting');
    assert.equal(health(machine({ reachable: false })), 'unreachable');
    assert.equal(phaseOf(machine({ reachable: false })), 'Unreachable');
  });

  it('shows the agent’s phase while it answers, Unknown before the first look', () => {
    assert.equal(phaseOf(machine({ phase: 'WritingSlot' })), 'WritingSlot');
    assert.equal(phaseOf(machine()), 'Unknown');
  });
});

describe('slotText', () => {
  const slots: Observed['slots'] = [
    { slot: 'A', status: 'good', version: '1.0.0' },
    { slot: 'B', status: 'empty', version: null },
  ];

  it('marks the booted slot ● and the committed one ★', () => {
    const m = machine({ slots, bootedSlot: 'A', committedSlot: 'A' });
    assert.equal(slotText(m, 'A'), '1.0.0 ● booted ★');
  });

  it('marks a slot the agent marked bad', () => {
    const bad: Observed['slots'] = [
      { slot: 'A', status: 'ready', version: '1.0.0' },
      { slot: 'B', status: 'bad', version: '1.1.0', badReason: 'never became healthy' },
    ];
    const m = machine({ slots: bad, bootedSlot: 'A', committedSlot: 'A' });
    assert.equal(slotText(m, 'B'), '1.1.0 ✗ bad');
    assert.equal(slotText(m, 'A'), '1.0.0 ● booted ★');
  });

  it('shows the status of a slot without a release, and nothing for an unknown slot', () => {
    assert.equal(slotText(machine({ slots, bootedSlot: 'A' }), 'B'), 'empty');
    assert.equal(slotText(machine({}), 'A'), undefined);
    assert.equal(slotText(machine(), 'A'), undefined);
  });
});

describe('a rollout’s counts', () => {
  it('reads done, in flight and failed (rolled back included), and names the rollout', () => {
    const c = counts({ total: 6, Succeeded: 3, InFlight: 1, Failed: 1, RolledBack: 1 });
    assert.equal(
      countsLine(c, 'workers-1.1.0'),
      '3/6 done · 1 in flight · 2 failed · workers-1.1.0',
    );
  });

  it('adds the quarantined machines only when there are some', () => {
    const c = counts({ total: 4, Succeeded: 2, Skipped: 1 });
    assert.equal(countsLine(c, 'r'), '2/4 done · 0 in flight · 0 failed · 1 quarantined · r');
  });

  it('splits the bar in shares of the pool: done, in flight, failed, quarantined', () => {
    const c = counts({ total: 4, Succeeded: 2, InFlight: 1, RolledBack: 1 });
    assert.deepEqual(
      barParts(c).map((p) => [p.percent, p.colour]),
      [
        [50, 'var(--ok)'],
        [25, 'var(--run)'],
        [25, 'var(--bad)'],
        [0, 'var(--warn)'],
      ],
    );
  });

  it('draws an empty bar for an empty pool instead of dividing by zero', () => {
    assert.deepEqual(
      barParts(counts({})).map((p) => p.percent),
      [0, 0, 0, 0],
    );
  });
});

describe('the planner’s words', () => {
  it('names the canary and the batches, and says ? when the planner has not decided', () => {
    assert.deepEqual(
      [batchLabel({ batch: 0 }), batchLabel({ batch: 2 }), batchLabel(undefined)],
      ['canary', 'batch 2', 'batch ?'],
    );
  });

  it('lists waiting and soaking machines as waiting, nothing else', () => {
    const waiting = (
      ['start', 'wait', 'in-flight', 'soaking', 'done', 'failed', 'skipped'] as const
    ).filter((action) => isWaiting({ action }));
    assert.deepEqual(waiting, ['wait', 'soaking']);
  });
});

describe('a rollout as people read it', () => {
  it('drops the CLI command a reason names, since the page has a button for it', () => {
    assert.equal(
      pageReason('rollout r1 awaits approval (molt rollout approve r1)'),
      'rollout r1 awaits approval',
    );
    assert.equal(
      pageReason('held until 2026-11-29T00:11:14Z: disk (swap)'),
      'held until 2026-11-29T00:11:14Z: disk (swap)',
    );
  });

  it('names states in words, not CamelCase', () => {
    assert.equal(stateLabel.AwaitingApproval, 'Awaiting approval');
    assert.equal(stateLabel.RolledBack, 'Rolled back');
  });

  it('heads a rollback as going back, so it is not a second card like the rollout it reverses', () => {
    const target = { version: '1.0.0' };
    assert.equal(rolloutHeading({ pool: 'workers', target }), 'workers → 1.0.0');
    assert.equal(rolloutHeading({ pool: 'workers', target, rollbackOf: 'w' }), 'workers ↩ 1.0.0');
  });
});

describe('an operation’s result', () => {
  it('says a rollback a person asked for did what was asked, in the colour of success', () => {
    assert.deepEqual(resultLabel({ result: 'RolledBack', reason: 'manual' }), {
      text: 'rolled back as asked',
      look: 'phase-Succeeded',
    });
  });

  it('keeps the reason of a rollback the agent made by itself, and of a failure, in their colour', () => {
    assert.deepEqual(resultLabel({ result: 'RolledBack', reason: 'HealthDeadline' }), {
      text: 'RolledBack: HealthDeadline',
      look: 'phase-RolledBack',
    });
    assert.deepEqual(resultLabel({ result: 'Succeeded' }), {
      text: 'Succeeded',
      look: 'phase-Succeeded',
    });
  });
});
