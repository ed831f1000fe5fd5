// SPDX-License-Identifier: Apache-2.0
/**
 * A history event as a notification (docs/adr/0009): its kind in the words sinks filter on
 * (`protocol/notifications.ts`), the pool and release of the rollout it concerns, why and by whom,
 * and an id that is the same whoever sends it and however often — the receiver's de-duplication
 * key, since delivery is at least once.
 */
import { createHash } from 'node:crypto';
import type { Rollout } from '../../core/rollout/types.ts';
import { isMachinePhase, isRolloutState } from '../../core/rollout/vocabulary.ts';
import { kebab } from '../../protocol/notifications.ts';
import type { Notification } from '../ports/notification-sink.ts';
import type { HistoryEvent, MachineRecord } from '../ports/store.ts';

/** What a notification is told about besides its event: the rollouts and machines it may name. */
export interface NotificationContext {
  readonly rollouts: readonly Rollout[];
  readonly machines: readonly MachineRecord[];
}

const text = (v: unknown): string | undefined =>
  typeof v === 'string' && v !== '' ? v : undefined;

/** Kinds that depend on the event's kind alone. */
const fixedKinds: Partial<Record<HistoryEvent['kind'], string>> = {
  'rollout-created': 'rollout.created',
  'machine-start': 'machine.started',
  'machine-rollback': 'machine.rolling-back',
  warning: 'warning',
  'kube-step': 'kubernetes.step',
};

/** A staging ahead (docs/adr/0019): made, or discarded. */
const stageKind = (data: Record<string, unknown>): string =>
  data['discarded'] === true ? 'machine.stage-discarded' : 'machine.staged';

/** `kubernetes.<phase>` of a Kubernetes plan's event (docs/adr/0012). */
const kubePlanKind = (phase: unknown): string => {
  const p = text(phase);
  return p !== undefined && /^[A-Za-z]+$/.test(p) ? `kubernetes.${kebab(p)}` : 'kubernetes.plan';
};

/** The kind sinks filter on: `rollout.halted`, `machine.failed`, `decision.hold`, `warning`, … */
export function notificationKind(e: Pick<HistoryEvent, 'kind' | 'data'>): string {
  const data = e.data ?? {};
  if (e.kind === 'rollout-state')
    return isRolloutState(data['state']) ? `rollout.${kebab(data['state'])}` : 'rollout.changed';
  if (e.kind === 'machine-result')
    return isMachinePhase(data['phase']) ? `machine.${kebab(data['phase'])}` : 'machine.result';
  if (e.kind === 'decision') {
    const action = text(data['action']);
    return action !== undefined && /^[a-z][a-z-]*$/.test(action)
      ? `decision.${action}`
      : 'decision';
  }
  if (e.kind === 'kube-plan') return kubePlanKind(data['phase']);
  if (e.kind === 'machine-stage') return stageKind(data);
  return fixedKinds[e.kind] ?? e.kind;
}

/** Stable for one event of one store: its seq, time, kind and message hashed. */
export function notificationId(e: HistoryEvent): string {
  const hash = createHash('sha256')
    .update(`${String(e.seq)}\0${String(e.at)}\0${e.kind}\0${e.message}`)
    .digest('hex');
  return `molt-${String(e.seq)}-${hash.slice(0, 16)}`;
}

/** The pool and release the event concerns: its rollout's, else its machine's pool. */
function placeOf(e: HistoryEvent, c: NotificationContext): Pick<Notification, 'pool' | 'release'> {
  const rollout = e.rollout === undefined ? undefined : c.rollouts.find((r) => r.id === e.rollout);
  const machine = e.machine === undefined ? undefined : c.machines.find((m) => m.id === e.machine);
  const pool = rollout?.pool ?? machine?.pool ?? text(e.data?.['pool']);
  return {
    ...(pool !== undefined && { pool }),
    ...(rollout !== undefined && {
      release: { version: rollout.target.version, digest: rollout.target.digest },
    }),
  };
}

export function notificationOf(e: HistoryEvent, c: NotificationContext): Notification {
  const reason = text(e.data?.['reason']);
  return {
    id: notificationId(e),
    seq: e.seq,
    kind: notificationKind(e),
    at: new Date(e.at).toISOString(),
    message: e.message,
    ...(e.rollout !== undefined && { rollout: e.rollout }),
    ...(e.machine !== undefined && { machine: e.machine }),
    ...placeOf(e, c),
    ...(reason !== undefined && { reason }),
    by: text(e.data?.['by']) ?? 'operator',
    ...(e.data !== undefined && { data: e.data }),
  };
}
