// SPDX-License-Identifier: Apache-2.0
/**
 * Turning what agents report into rollout progress (docs/adr/0005 §4), by level: every pass looks
 * at each in-flight machine afresh. The agent's journal outlives its reboots, so its `last` result
 * for our operation id is the answer; a machine recorded as started but never asked (the operator
 * died between the two writes) is asked now, or adopted when its agent already runs our image.
 */
import type { MachineProgress, Rollout } from '../../core/rollout/types.ts';
import type { AgentStatus } from '../../protocol/agent.ts';
import { booted, type Observation } from './observation.ts';

/** What to do about one in-flight machine. */
export type ProgressStep =
  | { readonly kind: 'set'; readonly machine: string; readonly progress: MachineProgress }
  | { readonly kind: 'submit'; readonly machine: string }
  | { readonly kind: 'wait'; readonly machine: string }
  /** Healthy per its agent, but the pool's health gates kept failing: roll it back through the agent. */
  | { readonly kind: 'rollback'; readonly machine: string; readonly reason: string };

export interface ProgressOptions {
  readonly now: number;
  /** An in-flight machine whose agent stays away this long counts as failed. */
  readonly unreachableFailMs: number;
  /** The image reference the rollout installs (`registry/repo@digest`). */
  readonly image: string;
  /** The first failing health gate of the machine's pool, as a sentence (none: all pass). */
  readonly failingGate?: string;
  /** How long a machine the agent finished may wait for the gates before it is rolled back. */
  readonly gateGraceMs?: number;
}

function finished(
  p: MachineProgress,
  now: number,
  patch: Partial<MachineProgress>,
): MachineProgress {
  return { ...p, finishedAt: now, ...patch };
}

function fromResult(
  rollout: Rollout,
  p: MachineProgress,
  status: AgentStatus,
  now: number,
): MachineProgress | undefined {
  const last = status.last;
  if (p.operationId === undefined || last?.operationId !== p.operationId) return undefined;
  // A fleet rollback's machine switched slots by the agent's manual rollback, which ends
  // `RolledBack{manual}` when it worked.
  const switchedBack =
    last.kind === 'rollback' && last.result === 'RolledBack' && last.reason === 'manual';
  if (last.result === 'Succeeded' || switchedBack) {
    const digest = booted(status).digest;
    if (digest === rollout.target.digest) return finished(p, now, { phase: 'Succeeded' });
    return finished(p, now, {
      phase: 'Failed',
      reason: `boots ${digest ?? 'an unknown release'}, not the target`,
    });
  }
  const reason = [last.code, last.reason].filter((x) => x !== undefined).join(': ');
  return finished(p, now, { phase: last.result, ...(reason !== '' && { reason }) });
}

function unreachable(
  machine: string,
  p: MachineProgress,
  observation: Observation | undefined,
  o: ProgressOptions,
): ProgressStep {
  const since = p.startedAt ?? o.now;
  if (o.now - since < o.unreachableFailMs) return { kind: 'wait', machine };
  const reason = `agent unreachable for ${String(Math.round((o.now - since) / 1000))} s: ${observation?.error ?? 'never seen'}`;
  return { kind: 'set', machine, progress: finished(p, o.now, { phase: 'Failed', reason }) };
}

/** Recorded as started, never asked (or the answer was lost): adopt what the agent runs, or ask. */
function neverAsked(
  rollout: Rollout,
  at: { readonly machine: string; readonly p: MachineProgress; readonly status: AgentStatus },
  o: ProgressOptions,
): ProgressStep {
  const { machine, p, status } = at;
  const ours =
    (status.operation?.kind === 'upgrade' && status.operation.image === o.image) ||
    (rollout.rollbackOf !== undefined && status.operation?.kind === 'rollback');
  if (ours && status.operation !== null)
    return { kind: 'set', machine, progress: { ...p, operationId: status.operation.id } };
  if (status.phase !== 'Idle') return { kind: 'wait', machine };
  if (booted(status).digest === rollout.target.digest)
    return { kind: 'set', machine, progress: finished(p, o.now, { phase: 'Succeeded' }) };
  return { kind: 'submit', machine };
}

/**
 * Health gates after each machine (issue 4): a machine its agent reports healthy on the target
 * is done only once the pool's gates pass; while they fail it stays in flight (so it still counts
 * against the limits) for up to `gateGraceMs` after the agent finished, then it is rolled back
 * through its agent. A fleet rollback is not held back by gates: it is the way out of them.
 */
function afterGates(
  rollout: Rollout,
  at: { readonly machine: string; readonly status: AgentStatus; readonly result: MachineProgress },
  o: ProgressOptions,
): ProgressStep {
  const { machine, status, result } = at;
  if (o.failingGate === undefined || rollout.rollbackOf !== undefined)
    return { kind: 'set', machine, progress: result };
  const agentDone = Date.parse(status.last?.finishedAt ?? '');
  const since = Number.isNaN(agentDone) ? o.now : agentDone;
  const grace = o.gateGraceMs ?? 5 * 60_000;
  if (o.now - since < grace) return { kind: 'wait', machine };
  const reason = `${o.failingGate} ${String(Math.round((o.now - since) / 1000))} s after the upgrade`;
  return { kind: 'rollback', machine, reason };
}

/** The step for one in-flight machine of `rollout`. */
export function progressStep(
  rollout: Rollout,
  machine: string,
  observation: Observation | undefined,
  o: ProgressOptions,
): ProgressStep {
  const p = rollout.machines[machine];
  if (p?.phase !== 'InFlight') return { kind: 'wait', machine };
  const status = observation?.status;
  if (status === undefined) return unreachable(machine, p, observation, o);
  const result = fromResult(rollout, p, status, o.now);
  if (result?.phase === 'Succeeded') return afterGates(rollout, { machine, status, result }, o);
  if (result !== undefined) return { kind: 'set', machine, progress: result };
  if (p.operationId !== undefined) return { kind: 'wait', machine };
  return neverAsked(rollout, { machine, p, status }, o);
}
