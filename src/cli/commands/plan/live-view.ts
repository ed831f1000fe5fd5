// SPDX-License-Identifier: Apache-2.0
/**
 * How `molt plan` prints the live operator's plan: the rollouts and the planner's verdict on each,
 * the decision for every machine with every check that refuses it, and each pool's next release
 * with the newer ones it passes over. The decision table is the offline plan's (`view.ts`).
 */
import { shownAt } from '../../../protocol/operator-columns.ts';
import {
  isEnded,
  type PlanDecisionView,
  type PlanView,
  type PoolReleasesView,
  type PrintColumn,
  type RolloutSummaryView,
} from '../../../protocol/index.ts';
import { renderTable } from '../../output.ts';
import { decisionColumns, type DecisionRow } from './view.ts';

/** What {@link describeLivePlan} prints. */
export interface LivePlan {
  readonly operator: string;
  readonly plan: PlanView;
  readonly rollouts: readonly RolloutSummaryView[];
}

interface RolloutRow {
  readonly rollout: string;
  readonly summary: RolloutSummaryView | undefined;
  readonly verdict: string;
  readonly message?: string | undefined;
}

const rolloutColumns: readonly PrintColumn<RolloutRow>[] = [
  { header: 'ROLLOUT', value: (r) => r.rollout },
  { header: 'POOL', value: (r) => r.summary?.pool ?? '-' },
  { header: 'TARGET', value: (r) => r.summary?.target.version ?? '-' },
  { header: 'STATE', value: (r) => r.summary?.state ?? '-' },
  { header: 'NOW', value: now },
  { header: 'MESSAGE', value: (r) => r.message ?? '' },
];

/**
 * The planner's verdict on a rollout, as what happens now: `continue` on a rollout that awaits
 * approval or is paused starts nothing, so it reads as the wait it is.
 */
function now(r: RolloutRow): string {
  if (r.verdict !== 'continue') return r.verdict;
  if (r.summary?.state === 'AwaitingApproval') return 'wait for approval';
  if (r.summary?.state === 'Paused') return 'wait (paused)';
  return 'continue';
}

const releaseColumns: readonly PrintColumn<PoolReleasesView>[] = [
  { header: 'POOL', value: (p) => p.pool },
  { header: 'CURRENT', value: (p) => p.current ?? '-' },
  {
    header: 'NEXT',
    value: (p) =>
      p.next === undefined
        ? (p.none ?? '-')
        : `${p.next.version}${p.next.path === undefined ? '' : ` (path ${p.next.path.join(' → ')})`}${p.next.notBefore === undefined ? '' : ` not before ${shownAt(p.next.notBefore, Date.now())}`}`,
  },
  { header: 'PASSED OVER', value: (p) => p.notTaken.map((n) => passedOver(p.pool, n)).join('; ') },
];

/** A release a pool passes over, and why; a blocked one (a halt's, a rollback's) how to offer it. */
function passedOver(pool: string, n: PoolReleasesView['notTaken'][number]): string {
  const again =
    n.code === 'Blocked'
      ? `; offer it again: molt releases unblock ${n.version} --pool ${pool}`
      : '';
  return `${n.version} (${n.code}: ${n.reason}${again})`;
}

/** A decision with the refusals after its first named on its reason (`… (also: Window, Rate)`). */
export function decisionRow(d: PlanDecisionView): DecisionRow {
  const also = (d.refusals ?? []).slice(1).map((r) => r.code);
  const reason =
    d.reason === undefined
      ? undefined
      : {
          code: d.reason.code,
          message:
            also.length === 0 ? d.reason.message : `${d.reason.message} (also: ${also.join(', ')})`,
        };
  return {
    rollout: d.rollout,
    machine: d.machine,
    action: d.action,
    batch: d.batch,
    ...(d.staged === true && { staged: true }),
    ...(reason !== undefined && { reason }),
    ...(d.notBefore !== undefined && { notBefore: d.notBefore }),
  };
}

function header(l: LivePlan): string {
  const p = l.plan;
  const seen = `${String(p.observed.machines)} of ${String(p.observed.of)} machines observed${p.observed.oldest === undefined ? '' : `, the oldest at ${shownAt(p.observed.oldest, Date.now())}`}`;
  const standby = p.leader
    ? ''
    : 'this operator does not lead: it observes nothing, so its machines look unavailable — ask the leader\n';
  return `plan of the operator at ${l.operator} at ${shownAt(p.at, Date.now())} (${p.leader ? 'leader' : 'standby'}; ${seen})\n${standby}`;
}

/** `next: start w-3, w-4` or why nothing starts. */
function nextLine(decisions: readonly PlanDecisionView[]): string {
  const starts = decisions.filter((d) => d.action === 'start').map((d) => d.machine);
  const waiting = decisions.filter((d) => d.action === 'wait').length;
  const why = waiting === 0 ? '' : `${String(waiting)} waiting (why: below)`;
  if (starts.length > 0) return `next: start ${starts.join(', ')}${why === '' ? '' : `; ${why}`}\n`;
  return `next: nothing starts now${why === '' ? '' : `; ${why}`}\n`;
}

/**
 * The table form of the live plan: the rollouts still running (ended ones are history:
 * `molt rollout list`), the next starts, each machine's decision, the pools' next releases.
 */
export function describeLivePlan(l: LivePlan): string {
  const p = l.plan;
  const byId = new Map(l.rollouts.map((r) => [r.id, r]));
  const running = p.rollouts
    .map((v) => ({ ...v, summary: byId.get(v.rollout) }))
    .filter((r) => r.summary === undefined || !isEnded(r.summary.state));
  const ids = new Set(running.map((r) => r.rollout));
  const decisions = p.decisions.filter((d) => ids.has(d.rollout));
  const parts = [header(l)];
  if (running.length === 0) parts.push('\nno rollout is running: nothing to start\n');
  else {
    parts.push(`\nrollouts:\n${renderTable(rolloutColumns, running)}`);
    parts.push(
      `\n${nextLine(decisions)}${renderTable(decisionColumns(p.at), decisions.map(decisionRow))}`,
    );
  }
  if (p.releases !== undefined && p.releases.length > 0)
    parts.push(`\nnext releases:\n${renderTable(releaseColumns, p.releases)}`);
  else if (p.releases === undefined)
    parts.push('\nnext releases: unknown (the operator could not read the registry)\n');
  return parts.join('');
}
