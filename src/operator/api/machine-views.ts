// SPDX-License-Identifier: Apache-2.0
/**
 * A managed machine as the API and the dashboard show it: its record, its hold, and what the loop
 * last saw of it — with "rebooting" told apart from "unreachable": an agent that stops answering
 * in the middle of an operation (the operator's upgrade in flight, or one its last answer named)
 * is taking the reboot the operation asked for ({@link isRebooting}).
 */
import { isEnded } from '../../core/rollout/vocabulary.ts';
import type { Policy, Rollout } from '../../core/rollout/types.ts';
import { iso } from '../../core/time.ts';
import type { AgentStatus } from '../../protocol/agent.ts';
import {
  RebootGraceMs,
  type DashboardMachineView,
  type MachineView,
} from '../../protocol/operator.ts';
import { booted, isAvailable, type Observation } from '../decide/observation.ts';
import type { FleetPolicies } from '../decide/snapshot.ts';
import type { Hold, MachineRecord, StoredState } from '../ports/store.ts';
import type { ObservationBook } from './observations.ts';

/** What the operator knows of a machine besides its record. */
export interface MachineFacts {
  readonly hold: Hold | undefined;
  readonly observation: Observation | undefined;
  /** Whether it is most likely rebooting ({@link isRebooting}). */
  readonly rebooting: boolean;
}

/** The inputs of {@link isRebooting}. */
export interface RebootClues {
  readonly observation: Observation | undefined;
  /** The last observation in which its agent answered. */
  readonly lastAnswer: Observation | undefined;
  /** The operator has an upgrade of it in flight, in a rollout not ended. */
  readonly inFlight: boolean;
  /** Epoch ms. */
  readonly now: number;
}

/**
 * Whether an unreachable machine is rebooting: the operator has an upgrade of it in flight (the
 * loop fails it once it stays away `unreachableFail`), or its agent's last answer, within
 * {@link RebootGraceMs}, named an operation (an upgrade, a rollback, a reboot a person asked for).
 * Otherwise it is unreachable like any other.
 */
export function isRebooting(c: RebootClues): boolean {
  if (c.observation === undefined || c.observation.status !== undefined) return false;
  if (c.inFlight) return true;
  const last = c.lastAnswer;
  if (last?.status === undefined || c.now - last.at > RebootGraceMs) return false;
  return last.status.operation !== null;
}

const inFlight = (rollouts: readonly Rollout[], id: string): boolean =>
  rollouts.some((r) => !isEnded(r.state) && r.machines[id]?.phase === 'InFlight');

/** The facts of machine `id` from the stored state and the loop's observations. */
export function machineFacts(
  stored: StoredState,
  book: ObservationBook,
  o: { readonly id: string; readonly now: number },
): MachineFacts {
  const observation = book.get(o.id);
  const rebooting = isRebooting({
    observation,
    lastAnswer: book.lastAnswer(o.id),
    inFlight: inFlight(stored.rollouts, o.id),
    now: o.now,
  });
  return { hold: stored.holds[o.id], observation, rebooting };
}

/** Slots and boot state for the fleet grid (dashboard, `molt machine list -o json`). */
function bootView(s: AgentStatus): Partial<NonNullable<MachineView['observed']>> {
  const last = s.last;
  return {
    bootedSlot: s.bootedSlot,
    committedSlot: s.boot.committed,
    slots: s.slots.map((slot) => ({
      slot: slot.slot,
      status: slot.status,
      version: slot.version,
      ...(slot.badReason !== undefined && { badReason: slot.badReason }),
    })),
    ...(last !== null && {
      last: {
        result: last.result,
        ...(last.reason !== undefined && { reason: last.reason }),
      },
    }),
  };
}

function observedView(o: Observation, rebooting: boolean): NonNullable<MachineView['observed']> {
  const s = o.status;
  const b = s === undefined ? {} : booted(s);
  return {
    at: iso(o.at),
    reachable: s !== undefined,
    available: isAvailable(o),
    ...(b.version !== undefined && { version: b.version }),
    ...(b.digest !== undefined && { digest: b.digest }),
    ...(s !== undefined && { phase: s.phase }),
    ...(s?.operation != null && { operation: `${s.operation.kind} ${s.operation.id}` }),
    ...(o.error !== undefined && { error: o.error }),
    ...(rebooting && { rebooting: true }),
    ...(s !== undefined && bootView(s)),
  };
}

export function machineView(m: MachineRecord, f: MachineFacts): MachineView {
  const hold = f.hold;
  return {
    id: m.id,
    endpoint: m.endpoint,
    role: m.role,
    pool: m.pool,
    ...(m.cluster !== undefined && { cluster: m.cluster }),
    labels: { ...m.labels },
    ...(m.registered === true && { registered: true }),
    ...(hold !== undefined && {
      hold: {
        reason: hold.reason,
        until: iso(hold.until),
        ...(hold.by !== undefined && { by: hold.by }),
      },
    }),
    ...(f.observation !== undefined && { observed: observedView(f.observation, f.rebooting) }),
  };
}

const zoneLabel = (policies: readonly Policy[]): string | undefined =>
  policies.find((p) => p.kind === 'zones')?.label;

/**
 * The machine's zone: the value of the label its pool's (else the fleet's) `zones` policy orders
 * by, else of `zone` or `topology.kubernetes.io/zone`.
 */
export function machineZone(m: MachineRecord, fleet: FleetPolicies): string | undefined {
  const pool = fleet.pools.find((p) => p.name === m.pool);
  const label = zoneLabel(pool?.policies ?? []) ?? zoneLabel(fleet.fleetPolicies);
  const value = label === undefined ? undefined : m.labels[label];
  return value ?? m.labels['zone'] ?? m.labels['topology.kubernetes.io/zone'];
}

/** What {@link dashboardMachineView} shows besides the facts. */
export interface DashboardShown {
  readonly fleet: FleetPolicies;
  /** A signed-in person: the hold's reason and who held it are shown. */
  readonly signedIn: boolean;
}

/** A machine as the dashboard's listener shows it: {@link machineView} less what the page never draws. */
export function dashboardMachineView(
  m: MachineRecord,
  f: MachineFacts,
  shown: DashboardShown,
): DashboardMachineView {
  const o = f.observation === undefined ? undefined : observedView(f.observation, f.rebooting);
  const zone = machineZone(m, shown.fleet);
  const hold = f.hold;
  return {
    id: m.id,
    role: m.role,
    pool: m.pool,
    ...(m.cluster !== undefined && { cluster: m.cluster }),
    ...(zone !== undefined && { zone }),
    ...(hold !== undefined && {
      hold: {
        until: iso(hold.until),
        ...(shown.signedIn && { reason: hold.reason }),
        ...(shown.signedIn && hold.by !== undefined && { by: hold.by }),
      },
    }),
    ...(o !== undefined && {
      observed: Object.fromEntries(
        Object.entries(o).filter(([k]) => k !== 'error' && k !== 'digest'),
      ) as NonNullable<DashboardMachineView['observed']>,
    }),
  };
}
