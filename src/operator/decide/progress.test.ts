// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Rollout } from '../../core/rollout/types.ts';
import type { AgentStatus } from '../../protocol/agent.ts';
import { withAwaySince } from './observation.ts';
import { progressStep } from './progress.ts';

const target = { version: '1.1.0', digest: `sha256:${'b'.repeat(64)}` };
const old = `sha256:${'a'.repeat(64)}`;
const image = `reg/molt@${target.digest}`;
const options = { now: 100_000, unreachableFailMs: 60_000, image };

function status(o: {
  digest: string;
  phase?: string;
  last?: AgentStatus['last'];
  operation?: AgentStatus['operation'];
}): AgentStatus {
  return {
    node: 'w-1',
    role: 'worker',
    bootId: 'b1',
    bootedSlot: 'B',
    version: o.digest === target.digest ? '1.1.0' : '1.0.0',
    slots: [
      { slot: 'A', status: 'ready', version: '1.0.0', digest: old, generation: 1 },
      { slot: 'B', status: 'ready', version: '1.1.0', digest: o.digest, generation: 2 },
    ],
    boot: { bootloader: 'grub', committed: 'B', oneShot: null, entries: [] },
    phase: o.phase ?? 'Idle',
    operation: o.operation ?? null,
    last: o.last ?? null,
  };
}

const rollout = (p: Rollout['machines'][string]): Rollout => ({
  id: 'r1',
  pool: 'workers',
  target,
  state: 'Active',
  createdAt: 0,
  machines: { 'w-1': p },
});

const result = (r: 'Succeeded' | 'Failed' | 'RolledBack', extra = {}) => ({
  operationId: 'op-1',
  kind: 'upgrade' as const,
  result: r,
  finishedAt: 'x',
  ...extra,
});

describe('progressStep', () => {
  const inFlight = { phase: 'InFlight' as const, startedAt: 50_000, operationId: 'op-1' };

  /** The progress an in-flight w-1 gets from an agent that finished with `last`. */
  function finishedWith(last: ReturnType<typeof result>) {
    const step = progressStep(
      rollout(inFlight),
      'w-1',
      { at: 1, status: status({ digest: old, last }) },
      options,
    );
    assert.ok(step.kind === 'set', JSON.stringify(step));
    return step.progress;
  }

  it("marks the machine Succeeded when the agent's result for our operation says so and it boots the target", () => {
    const s = status({ digest: target.digest, last: result('Succeeded') });
    const step = progressStep(rollout(inFlight), 'w-1', { at: 1, status: s }, options);
    assert.ok(step.kind === 'set');
    assert.equal(step.progress.phase, 'Succeeded');
  });

  it('fails a machine whose agent reports success but boots another release', () => {
    const s = status({ digest: old, last: result('Succeeded') });
    const step = progressStep(rollout(inFlight), 'w-1', { at: 1, status: s }, options);
    assert.ok(step.kind === 'set' && step.progress.phase === 'Failed');
    assert.match(step.progress.reason ?? '', /not the target/);
  });

  it('carries a rollback and its reason from the agent', () => {
    const last = result('RolledBack', { code: 'MOLT_HEALTH_DEADLINE', reason: 'never healthy' });
    const step = progressStep(
      rollout(inFlight),
      'w-1',
      { at: 1, status: status({ digest: old, last }) },
      options,
    );
    assert.ok(step.kind === 'set' && step.progress.phase === 'RolledBack');
    assert.equal(step.progress.reason, 'MOLT_HEALTH_DEADLINE: never healthy');
  });

  it('shows the machine’s own sentence rather than the bare reason word, when the agent gives one', () => {
    const last = result('RolledBack', {
      code: 'MOLT_HEALTH_DEADLINE',
      reason: 'HealthDeadline',
      message: 'not healthy by the deadline: node w-1 is not Ready',
    });
    assert.equal(
      finishedWith(last).reason,
      'MOLT_HEALTH_DEADLINE: not healthy by the deadline: node w-1 is not Ready',
    );
  });

  it('pauses, rather than fails, when the cluster stopped the upgrade before the machine changed', () => {
    const last = result('Failed', { code: 'MOLT_KUBE_UNAVAILABLE', reason: 'API server away' });
    const s = status({ digest: old, last });
    const step = progressStep(rollout(inFlight), 'w-1', { at: 1, status: s }, options);
    assert.deepEqual(step, {
      kind: 'pause',
      machine: 'w-1',
      operationId: last.operationId,
      reason: 'MOLT_KUBE_UNAVAILABLE: API server away',
    });
    const skew = result('Failed', {
      code: 'MOLT_KUBELET_SKEW',
      reason: 'release 1.1: kubelet v1.36.0 is newer than the API server v1.35.4',
    });
    const older = progressStep(
      rollout(inFlight),
      'w-1',
      { at: 1, status: status({ digest: old, last: skew }) },
      options,
    );
    assert.equal(older.kind, 'pause', 'a control plane older than the kubelet: upgrade it first');
    const drain = result('Failed', { code: 'MOLT_DRAIN_TIMEOUT', reason: 'pods stayed' });
    const timedOut = progressStep(
      rollout(inFlight),
      'w-1',
      { at: 1, status: status({ digest: old, last: drain }) },
      options,
    );
    assert.ok(
      timedOut.kind === 'set' && timedOut.progress.phase === 'Failed',
      'a drain timeout is the workload’s, and counts',
    );
  });

  it('records a machine its drain quarantined as Skipped, not Failed', () => {
    const last = result('Failed', {
      code: 'MOLT_DRAIN_QUARANTINED',
      reason: 'node w-1 still runs shop/db-0 after 120 s; the node stays cordoned',
    });
    const progress = finishedWith(last);
    assert.equal(progress.phase, 'Skipped');
    assert.match(progress.reason ?? '', /^MOLT_DRAIN_QUARANTINED: node w-1 still runs/);
    assert.equal(progress.finishedAt, options.now);
  });

  it("ignores another operation's result and waits", () => {
    const last = { ...result('Succeeded'), operationId: 'someone-else' };
    const step = progressStep(
      rollout(inFlight),
      'w-1',
      { at: 1, status: status({ digest: old, last }) },
      options,
    );
    assert.equal(step.kind, 'wait');
  });

  it('waits for an unreachable agent (rebooting), then fails it after the limit', () => {
    const away = { at: 1, error: 'MOLT_AGENT_UNREACHABLE: refused' };
    assert.equal(progressStep(rollout(inFlight), 'w-1', away, options).kind, 'wait');
    const late = progressStep(rollout(inFlight), 'w-1', away, { ...options, now: 200_000 });
    assert.ok(late.kind === 'set' && late.progress.phase === 'Failed');
    assert.match(late.progress.reason ?? '', /unreachable for 150 s/);
  });

  it('counts the absence from the first unanswered look in a row, never from before the start', () => {
    const since = (awaySince: number) => ({
      at: 99_000,
      error: 'MOLT_AGENT_UNREACHABLE: reset',
      awaySince,
    });
    const later = { ...options, now: 200_000 };
    // 150 s after the start, away for the last 50 s: a long operation, then a reboot.
    assert.equal(progressStep(rollout(inFlight), 'w-1', since(150_000), later).kind, 'wait');
    const late = progressStep(rollout(inFlight), 'w-1', since(130_000), later);
    assert.ok(late.kind === 'set' && late.progress.phase === 'Failed');
    assert.match(late.progress.reason ?? '', /unreachable for 70 s/);
    // Away since before the machine started: counted from the start (50 s ago).
    assert.equal(progressStep(rollout(inFlight), 'w-1', since(10_000), options).kind, 'wait');
  });

  it('gives each unanswered look the time the absence began', () => {
    const answered = { at: 1, status: status({ digest: old }) };
    const first = withAwaySince(answered, { at: 5, error: 'e' });
    assert.equal(first.awaySince, 5);
    const second = withAwaySince(first, { at: 9, error: 'e' });
    assert.equal(second.awaySince, 5);
    assert.equal(
      withAwaySince(second, { at: 12, status: status({ digest: old }) }).awaySince,
      undefined,
    );
    assert.equal(withAwaySince(undefined, { at: 20, error: 'e' }).awaySince, 20);
  });

  describe('a start recorded but never sent (the operator died in between)', () => {
    const recorded = { phase: 'InFlight' as const, startedAt: 50_000 };
    it('asks the agent when it is idle on the old release', () => {
      const step = progressStep(
        rollout(recorded),
        'w-1',
        { at: 1, status: status({ digest: old }) },
        options,
      );
      assert.equal(step.kind, 'submit');
    });
    it('adopts the operation when the agent already runs our image', () => {
      const operation = {
        id: 'op-9',
        kind: 'upgrade' as const,
        phase: 'Pulling',
        image,
        startedAt: 'x',
      };
      const s = status({ digest: old, phase: 'Pulling', operation });
      const step = progressStep(rollout(recorded), 'w-1', { at: 1, status: s }, options);
      assert.ok(step.kind === 'set' && step.progress.operationId === 'op-9');
    });
    it('waits while the agent runs something else', () => {
      const operation = { id: 'op-9', kind: 'reboot' as const, phase: 'Rebooting', startedAt: 'x' };
      const s = status({ digest: old, phase: 'Rebooting', operation });
      assert.equal(
        progressStep(rollout(recorded), 'w-1', { at: 1, status: s }, options).kind,
        'wait',
      );
    });
    it('counts a machine already on the target as done', () => {
      const step = progressStep(
        rollout(recorded),
        'w-1',
        { at: 1, status: status({ digest: target.digest }) },
        options,
      );
      assert.ok(step.kind === 'set' && step.progress.phase === 'Succeeded');
    });
  });
});
