// SPDX-License-Identifier: Apache-2.0
/**
 * The operator's history as Kubernetes Events (docs/adr/0006 §9): each transition worth a human's
 * attention becomes one Event on the Rollout it concerns (with the machine's NodeUpgrade as the
 * related object), so `kubectl describe rollout.molt.dev …` and `kubectl get events` tell the
 * story. Pure: the mirror writes what this returns. The Event's name is derived from the history
 * entry, so writing it twice (a retry, a new leader) is a harmless conflict, not a duplicate.
 */
import { createHash } from 'node:crypto';
import { workloadRefOf } from '../../../core/images/workload.ts';
import {
  isMachinePhase,
  isRolloutState,
  type MachinePhase,
  type RolloutState,
} from '../../../core/rollout/vocabulary.ts';
import type { HistoryEvent } from '../../ports/store.ts';
import { kubeName } from './view.ts';

export interface EventSpec {
  readonly name: string;
  readonly type: 'Normal' | 'Warning';
  readonly reason: string;
  readonly message: string;
  readonly at: string;
  readonly involved: { readonly kind: 'Rollout' | 'NodeUpgrade'; readonly name: string };
  readonly related?: { readonly kind: 'NodeUpgrade'; readonly name: string };
}

type EventKind = readonly [EventSpec['type'], string];

/** The results a machine ends in (a `machine-result` entry never carries Pending or InFlight). */
const machineResults: Record<Exclude<MachinePhase, 'Pending' | 'InFlight'>, EventKind> = {
  Succeeded: ['Normal', 'MachineUpgraded'],
  Failed: ['Warning', 'MachineFailed'],
  RolledBack: ['Warning', 'MachineRolledBack'],
  Skipped: ['Warning', 'MachineQuarantined'],
};

const rolloutStates: Record<RolloutState, EventKind> = {
  Active: ['Normal', 'RolloutActive'],
  Paused: ['Warning', 'RolloutPaused'],
  Halted: ['Warning', 'RolloutHalted'],
  Completed: ['Normal', 'RolloutCompleted'],
  RolledBack: ['Warning', 'RolloutRolledBack'],
  Superseded: ['Normal', 'RolloutSuperseded'],
  Cancelled: ['Warning', 'RolloutCancelled'],
  AwaitingApproval: ['Normal', 'RolloutAwaitingApproval'],
};

const fixed: Partial<Record<HistoryEvent['kind'], readonly [EventSpec['type'], string]>> = {
  'rollout-created': ['Normal', 'RolloutCreated'],
  'machine-start': ['Normal', 'MachineUpgrading'],
  'machine-stage': ['Normal', 'MachineStaged'],
  'machine-rollback': ['Warning', 'MachineRollingBack'],
  warning: ['Warning', 'OperatorWarning'],
};

/** Type and reason of a history entry, or undefined for entries that are not Events (decisions). */
function classify(e: HistoryEvent): EventKind | undefined {
  const data = e.data ?? {};
  if (e.kind === 'rollout-state') {
    const state = data['state'];
    return isRolloutState(state) ? rolloutStates[state] : ['Normal', 'RolloutChanged'];
  }
  if (e.kind === 'machine-result') {
    const phase = data['phase'];
    return isMachinePhase(phase) && phase !== 'Pending' && phase !== 'InFlight'
      ? machineResults[phase]
      : ['Normal', 'MachineResult'];
  }
  return fixed[e.kind];
}

/** An image rollout's unit is a workload (`Kind/namespace/name`): its reasons say so. */
const workloadReasons: Readonly<Record<string, string>> = {
  MachineUpgrading: 'WorkloadUpdating',
  MachineUpgraded: 'WorkloadUpdated',
  MachineFailed: 'WorkloadFailed',
  MachineQuarantined: 'WorkloadSkipped',
  MachineResult: 'WorkloadResult',
};

export function eventFor(e: HistoryEvent): EventSpec | undefined {
  const classified = classify(e);
  if (classified === undefined) return undefined;
  const workload = e.machine !== undefined && workloadRefOf(e.machine) !== undefined;
  const kind: EventKind = workload
    ? [classified[0], workloadReasons[classified[1]] ?? classified[1]]
    : classified;
  const involved =
    e.rollout !== undefined
      ? ({ kind: 'Rollout', name: kubeName(e.rollout) } as const)
      : e.machine !== undefined
        ? ({ kind: 'NodeUpgrade', name: kubeName(e.machine) } as const)
        : undefined;
  if (involved === undefined) return undefined;
  const id = createHash('sha256')
    .update(`${String(e.at)}\0${e.kind}\0${e.message}`)
    .digest('hex');
  return {
    name: `molt.${String(e.seq)}.${id.slice(0, 10)}`,
    type: kind[0],
    reason: kind[1],
    message: e.message.slice(0, 1024),
    at: new Date(e.at).toISOString(),
    involved,
    // A workload has no NodeUpgrade to relate.
    ...(e.rollout !== undefined &&
      e.machine !== undefined &&
      !workload && {
        related: { kind: 'NodeUpgrade', name: kubeName(e.machine) } as const,
      }),
  };
}
