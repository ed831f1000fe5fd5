// SPDX-License-Identifier: Apache-2.0
/**
 * Turning what agents report into rollout progress (docs/adr/0005 §4), by level: every pass looks
 * at each in-flight machine afresh. The agent's journal outlives its reboots, so its `last` result
 * for our operation id is the answer; a machine recorded as started but never asked (the operator
 * died between the two writes) is asked now, or adopted when its agent already runs our image.
 */
import { ErrorCode } from '../../core/errors.ts';
import type { MachineProgress, Rollout, Strategy } from '../../core/rollout/types.ts';
import type { AgentStatus } from '../../protocol/agent.ts';
import type { ProviderOperation } from '../ports/provider.ts';
import { booted, type Observation } from './observation.ts';

/** Operation ids of replace operations (the provider's id after it) — never an agent's. */
export const REPLACE_PREFIX = 'replace:';

export const isReplaceOperation = (
  id: string | undefined,
): id is `${typeof REPLACE_PREFIX}${string}` => id?.startsWith(REPLACE_PREFIX) === true;

/**
 * Agent error codes meaning "this machine's slots cannot take this release" — the image breaks
 * the slot contract of this machine (a disk layout or artifact change) or does not fit its slot.
 * With these, and only these, an in-place pool with a provider replaces the machine instead: the
 * agent refuses them before it touches the machine, and a re-image is what they call for. Busy,
 * unreachable, boot and health failures are not fixed by re-imaging (and would hide a bad release).
 */
export const CANNOT_APPLY: ReadonlySet<string> = new Set<string>([
  ErrorCode.ImageInvalid,
  ErrorCode.ImageTooLarge,
]);

/**
 * Codes that say the cluster, not the release, stopped an upgrade before the machine changed (the
 * agent failed to cordon or drain its node): counting them against the release would halt a good
 * rollout over an API server that was away, so the rollout pauses and the machine is tried again
 * after `molt rollout resume`. A kubelet skew is one too: the release's kubelet is fine for a
 * cluster whose control plane is upgraded first, which is what the pause waits for.
 */
export const CLUSTER_SIDE: ReadonlySet<string> = new Set<string>([
  ErrorCode.KubeletSkew,
  ErrorCode.KubeUnavailable,
  ErrorCode.KubeForbidden,
  ErrorCode.KubeConfigInvalid,
  ErrorCode.KubeNodeNotFound,
]);

/** What to do about one in-flight machine. */
export type ProgressStep =
  | { readonly kind: 'set'; readonly machine: string; readonly progress: MachineProgress }
  | { readonly kind: 'submit'; readonly machine: string }
  | { readonly kind: 'wait'; readonly machine: string }
  /** Healthy per its agent, but the pool's health gates kept failing: roll it back through the agent. */
  | { readonly kind: 'rollback'; readonly machine: string; readonly reason: string }
  /** The agent cannot apply the release (a {@link CANNOT_APPLY} code): replace it through the provider. */
  | { readonly kind: 'replace'; readonly machine: string; readonly reason: string }
  /** A {@link CLUSTER_SIDE} failure of operation `operationId`: put the machine back, pause. */
  | {
      readonly kind: 'pause';
      readonly machine: string;
      readonly operationId: string;
      readonly reason: string;
    };

/** What the pool's provider said about a replace operation, or why it could not be asked. */
export type ProviderAnswer =
  ProviderOperation | { readonly error: string; readonly terminal: boolean };

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
  /** The pool's strategy. @default 'in-place' */
  readonly strategy?: Strategy;
  /** The pool has a provider: an in-place machine the agent cannot upgrade is replaced instead. */
  readonly canReplace?: boolean;
  /** For a replace operation: the provider's answer this pass. */
  readonly provider?: ProviderAnswer;
}

function finished(
  p: MachineProgress,
  now: number,
  patch: Partial<MachineProgress>,
): MachineProgress {
  return { ...p, finishedAt: now, ...patch };
}

/**
 * `CODE: why` of a finished operation: the machine's own sentence where it said one — the word
 * `HealthDeadline` alone tells a person nothing.
 */
function failureReason(last: NonNullable<AgentStatus['last']>): string {
  return [last.code, last.message ?? last.reason].filter((x) => x !== undefined).join(': ');
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
  const reason = failureReason(last);
  // The drain's `quarantine-and-skip`: the machine was set aside unchanged, not failed by the release.
  const phase = last.code === ErrorCode.DrainQuarantined ? 'Skipped' : last.result;
  return finished(p, now, { phase, ...(reason !== '' && { reason }) });
}

function unreachable(
  machine: string,
  p: MachineProgress,
  observation: Observation | undefined,
  o: ProgressOptions,
): ProgressStep {
  // How long the agent has stayed away: since the first look in a row without an answer, and never
  // before the machine started. A long pull and drain followed by a reboot is not that long away.
  const away = observation === undefined ? undefined : (observation.awaySince ?? observation.at);
  const since = Math.max(p.startedAt ?? o.now, away ?? Number.NEGATIVE_INFINITY);
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
 * Health gates after each machine: a machine its agent reports healthy on the target
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

/**
 * A replace operation settles from the provider, then the agent: done once the provider succeeded
 * and the machine's (new) agent answers idle on the target digest; failed when the provider says
 * so. A provider that cannot be asked is asked again next pass. Failing gates hold a replaced
 * machine in flight, but it is never rolled back: a re-imaged machine has no previous slot.
 */
function replaced(
  rollout: Rollout,
  at: { readonly machine: string; readonly p: MachineProgress },
  status: AgentStatus | undefined,
  o: ProgressOptions,
): ProgressStep {
  const { machine, p } = at;
  const answer = o.provider;
  const fail = (reason: string): ProgressStep => ({
    kind: 'set',
    machine,
    progress: finished(p, o.now, { phase: 'Failed', reason }),
  });
  if (answer === undefined) return { kind: 'wait', machine };
  if ('error' in answer) return answer.terminal ? fail(answer.error) : { kind: 'wait', machine };
  if (answer.state === 'failed')
    return fail(`replace failed: ${answer.message ?? 'no reason given'}`);
  if (answer.state === 'running' || status?.phase !== 'Idle') return { kind: 'wait', machine };
  return afterReplace(rollout, { machine, p, status }, o);
}

/** The provider succeeded and the machine's agent answers idle: is it on the target? */
function afterReplace(
  rollout: Rollout,
  at: { readonly machine: string; readonly p: MachineProgress; readonly status: AgentStatus },
  o: ProgressOptions,
): ProgressStep {
  const { machine, p, status } = at;
  const digest = booted(status).digest;
  if (digest !== rollout.target.digest) {
    const reason = `replaced, but boots ${digest ?? 'an unknown release'}, not the target`;
    return { kind: 'set', machine, progress: finished(p, o.now, { phase: 'Failed', reason }) };
  }
  if (o.failingGate !== undefined && rollout.rollbackOf === undefined)
    return { kind: 'wait', machine };
  return { kind: 'set', machine, progress: finished(p, o.now, { phase: 'Succeeded' }) };
}

/** The fallback: our in-place operation failed with a {@link CANNOT_APPLY} code, and a provider is there. */
function cannotApply(
  result: MachineProgress | undefined,
  status: AgentStatus,
  o: ProgressOptions,
): string | undefined {
  const code = status.last?.code;
  if (result?.phase !== 'Failed' || o.canReplace !== true || code == null) return undefined;
  return CANNOT_APPLY.has(code) ? (result.reason ?? code) : undefined;
}

/** No answer from the agent. A replace pool's machine never (knowingly) asked: ask the provider. */
function noAnswer(
  machine: string,
  p: MachineProgress,
  observation: Observation | undefined,
  o: ProgressOptions,
): ProgressStep {
  // The provider answers a running replace's id, so asking again is safe while the machine is down.
  if (p.operationId === undefined && o.strategy === 'replace') return { kind: 'submit', machine };
  return unreachable(machine, p, observation, o);
}

/** A failed result the operator acts on itself: replace the machine, or pause for the cluster. */
function afterFailure(
  m: { readonly machine: string; readonly p: MachineProgress },
  result: MachineProgress | undefined,
  status: AgentStatus,
  o: ProgressOptions,
): ProgressStep | undefined {
  const replace = cannotApply(result, status, o);
  if (replace !== undefined) return { kind: 'replace', machine: m.machine, reason: replace };
  const code = status.last?.code;
  if (result?.phase !== 'Failed' || code == null || !CLUSTER_SIDE.has(code)) return undefined;
  const operationId = m.p.operationId ?? '';
  return { kind: 'pause', machine: m.machine, operationId, reason: result.reason ?? code };
}

/**
 * Asked, no result yet: wait — unless what it staged still waits (the apply was lost, or the
 * start adopted the staged operation before sending it): send the apply again.
 */
function asked(machine: string, operationId: string, status: AgentStatus): ProgressStep {
  const staged = status.phase === 'Staged' && status.operation?.id === operationId;
  return { kind: staged ? 'submit' : 'wait', machine };
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
  if (isReplaceOperation(p.operationId)) return replaced(rollout, { machine, p }, status, o);
  if (status === undefined) return noAnswer(machine, p, observation, o);
  const result = fromResult(rollout, p, status, o.now);
  const failed = afterFailure({ machine, p }, result, status, o);
  if (failed !== undefined) return failed;
  if (result?.phase === 'Succeeded') return afterGates(rollout, { machine, status, result }, o);
  if (result !== undefined) return { kind: 'set', machine, progress: result };
  if (p.operationId !== undefined) return asked(machine, p.operationId, status);
  return neverAsked(rollout, { machine, p, status }, o);
}
