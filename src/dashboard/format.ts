// SPDX-License-Identifier: Apache-2.0
/**
 * What the page says about machines and rollouts, as plain values (no DOM): the health word of a
 * machine, what a slot holds, a rollout's counts line and bar, the colour of a phase. The words
 * themselves are core's vocabulary; the records below are keyed by it, so a new phase or decision
 * does not compile until the page decides how to show it.
 */
import type { DecisionAction, MachinePhase, RolloutState } from '../core/rollout/vocabulary.ts';
import { instant, when } from '../core/time.ts';
import type { DecisionView, DashboardMachineView, RolloutCounts } from '../protocol/operator.ts';

/**
 * A planner's reason as the page shows it: without the trailing CLI command it names
 * (`… awaits approval (molt rollout approve r1)`), since the page offers that action as a button.
 */
export const pageReason = (message: string): string => message.replace(/ \(molt [^()]*\)$/, '');

/** A rollout's state as people read it (the API's word stays in `data-state` and the class). */
export const stateLabel: Readonly<Record<RolloutState, string>> = {
  AwaitingApproval: 'Awaiting approval',
  Active: 'Active',
  Paused: 'Paused',
  Halted: 'Halted',
  Completed: 'Completed',
  RolledBack: 'Rolled back',
  Superseded: 'Superseded',
  Cancelled: 'Cancelled',
};

/** A rollout's heading: `pool → 1.1.0`, and a rollback says it goes back (`pool ↩ 1.0.0`). */
export const rolloutHeading = (r: {
  readonly pool: string;
  readonly target: { readonly version: string };
  readonly rollbackOf?: string | undefined;
}): string => `${r.pool} ${r.rollbackOf === undefined ? '→' : '↩'} ${r.target.version}`;

/** The colour (a CSS variable of style.css) each machine phase has in the timeline. */
export const phaseColour: Readonly<Record<MachinePhase, string>> = {
  Pending: 'var(--idle)',
  InFlight: 'var(--run)',
  Succeeded: 'var(--ok)',
  Failed: 'var(--bad)',
  RolledBack: 'var(--bad)',
  Skipped: 'var(--warn)',
};

/** The decisions "Why machines wait" lists: the machine could start but the planner holds it. */
const waits: Readonly<Record<DecisionAction, boolean>> = {
  start: false,
  wait: true,
  'in-flight': false,
  soaking: true,
  done: false,
  failed: false,
  skipped: false,
};

/** Whether the planner holds the machine back (listed with its reason). */
export const isWaiting = (d: Pick<DecisionView, 'action'>): boolean => waits[d.action];

const epoch = (t: string | number): number => (typeof t === 'number' ? t : Date.parse(t));

/**
 * An instant as every molt surface writes one: UTC to the second (`2026-11-29T00:11:14Z`), from
 * an ISO 8601 string or epoch milliseconds. For lines that are not redrawn (the event log).
 */
export const clock = (t: string | number): string => instant(epoch(t));

/** An instant and how far it is (`2026-11-29T00:11:14Z (in 5m)`), for facts a redraw refreshes. */
export const at = (t: string | number, now = Date.now()): string => when(epoch(t), now);

/** A machine's health word; style.css colours each (`health-<word>`). */
export type Health =
  'rebooting' | 'held' | 'unknown' | 'unreachable' | 'failed' | 'verifying' | 'healthy';

/**
 * The machine's health, first match wins: rebooting (unreachable while the operator upgrades it,
 * or just after it reported an operation: the reboot the upgrade asked for), held (a person said
 * so), unknown (not observed yet), unreachable, failed (the agent's last result), verifying
 * (booted a slot that is not yet the committed default: a trial boot), else healthy.
 */
export function health(m: DashboardMachineView): Health {
  const o = m.observed;
  if (o?.rebooting === true) return 'rebooting';
  if (m.hold !== undefined) return 'held';
  if (o === undefined) return 'unknown';
  if (!o.reachable) return 'unreachable';
  if (o.last?.result === 'Failed') return 'failed';
  if (o.bootedSlot !== undefined && o.committedSlot !== o.bootedSlot) return 'verifying';
  return 'healthy';
}

/**
 * The machine's phase as the page shows and filters it: the agent's (`Idle`, `Pulling`, …) while
 * it answers, else `Rebooting`, `Unreachable`, or `Unknown` before the first look.
 */
export function phaseOf(m: DashboardMachineView): string {
  const o = m.observed;
  if (o === undefined) return 'Unknown';
  if (o.rebooting === true) return 'Rebooting';
  if (!o.reachable) return 'Unreachable';
  return o.phase ?? 'Unknown';
}

/**
 * An operation's result for people, and the class that colours it. A rollback a person asked for
 * (`RolledBack` with reason `manual`) did what was asked: "rolled back as asked", in the colour of
 * success, not of a failure; a rollback the agent made by itself keeps its reason, in red.
 */
export function resultLabel(r: { readonly result: string; readonly reason?: string | undefined }): {
  readonly text: string;
  readonly look: string;
} {
  if (r.result === 'RolledBack' && r.reason === 'manual')
    return { text: 'rolled back as asked', look: 'phase-Succeeded' };
  return {
    text: `${r.result}${r.reason === undefined ? '' : `: ${r.reason}`}`,
    look: `phase-${r.result}`,
  };
}

/** An A/B slot's name. */
export type SlotId = 'A' | 'B';

/** One slot as the agent last reported it. */
export type SlotView = NonNullable<NonNullable<DashboardMachineView['observed']>['slots']>[number];

/** The slot `id` of the machine, when observed. */
export const slotOf = (m: DashboardMachineView, id: SlotId): SlotView | undefined =>
  m.observed?.slots?.find((x) => x.slot === id);

/**
 * What a slot cell shows: the release (or status) with ● booted and ★ committed, and ✗ bad for a
 * slot the agent marked bad (it never boots it again); undefined: unknown.
 */
export function slotText(m: DashboardMachineView, id: SlotId): string | undefined {
  const o = m.observed;
  const s = slotOf(m, id);
  if (o === undefined || s === undefined) return undefined;
  const what = s.version === null ? s.status : `${s.version}${s.status === 'bad' ? ' ✗ bad' : ''}`;
  const marks = `${o.bootedSlot === id ? ' ● booted' : ''}${o.committedSlot === id ? ' ★' : ''}`;
  return `${what}${marks}`;
}

/** Machines of a rollout's pool that failed it (failed, or failed and rolled back). */
export const failedCount = (c: RolloutCounts): number => c.Failed + c.RolledBack;

/** The line under a rollout's bar: `3/6 done · 1 in flight · 0 failed · <id>`. */
export function countsLine(c: RolloutCounts, id: string): string {
  const quarantined = c.Skipped > 0 ? ` · ${c.Skipped} quarantined` : '';
  return `${c.Succeeded}/${c.total} done · ${c.InFlight} in flight · ${failedCount(c)} failed${quarantined} · ${id}`;
}

/** One part of a rollout's progress bar: its share of the pool (percent) and colour. */
export interface BarPart {
  readonly percent: number;
  readonly colour: string;
}

/** The progress bar's parts, left to right: done, in flight, failed, quarantined. */
export function barParts(c: RolloutCounts): readonly BarPart[] {
  const part = (n: number, colour: string): BarPart => ({
    percent: (100 * n) / Math.max(1, c.total),
    colour,
  });
  return [
    part(c.Succeeded, phaseColour.Succeeded),
    part(c.InFlight, phaseColour.InFlight),
    part(failedCount(c), phaseColour.Failed),
    part(c.Skipped, phaseColour.Skipped),
  ];
}

/** The wave a machine started in, as the timeline names it: `canary`, `batch 2`, `batch ?`. */
export function batchLabel(d: Pick<DecisionView, 'batch'> | undefined): string {
  return d?.batch === 0 ? 'canary' : `batch ${d?.batch ?? '?'}`;
}
