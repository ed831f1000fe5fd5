// SPDX-License-Identifier: Apache-2.0
/**
 * A rollout's page (`#/rollout/<id>`): what it moves from and to, its state and why it ended, its
 * actions, every machine of its pool with its phase, wave, times, the planner's decision and the
 * operation, its own timeline, and its events (followed live by `main.ts`).
 */
import type { DashboardStateView } from '../protocol/dashboard.ts';
import type { MachineProgressView, RolloutView } from '../protocol/operator.ts';
import { rolloutActionBar, type ActContext } from './actions.ts';
import { el, find } from './dom.ts';
import { machineLink } from './fleet-grid.ts';
import { at, batchLabel, countsLine, pageReason, rolloutHeading, stateLabel } from './format.ts';
import { hashOf } from './route.ts';
import { progressBar } from './rollouts.ts';
import { timeline } from './timeline.ts';
import { startInstants } from './timeline-layout.ts';

const when = (t: string | undefined): string => (t === undefined ? '–' : at(t));

function decisionText(m: MachineProgressView): string {
  const d = m.decision;
  if (d === undefined) return m.reason ?? '–';
  const why = d.reason === undefined ? m.reason : pageReason(d.reason.message);
  const next = d.notBefore === undefined ? '' : ` (not before ${at(d.notBefore)})`;
  return `${d.action}${why === undefined ? '' : `: ${why}`}${next}`;
}

/** `sha256:abcdef123456` of an image reference's digest (or the reference when it has none). */
const shortImage = (image: string): string => {
  const at = image.indexOf('@sha256:');
  return at < 0 ? image : image.slice(at + 1, at + 20);
};

/** An image rollout's change of one workload: `container: from → to` (short digests). */
function changeText(r: RolloutView, unit: string): string {
  const changes = r.images?.units[unit]?.changes ?? [];
  return changes
    .map((c) => `${c.container}: ${shortImage(c.from)} → ${shortImage(c.to)}`)
    .join(', ');
}

function machineRow(r: RolloutView, m: MachineProgressView): HTMLTableRowElement {
  // An image rollout's units are workloads: no machine page to link, their change instead.
  const image = r.images !== undefined;
  return el(
    'tr',
    { 'data-machine': m.machine, 'data-phase': m.phase },
    el('td', {}, image ? m.machine : machineLink(m.machine)),
    el(
      'td',
      { class: `phase-${m.phase}` },
      m.phase,
      m.staged === true
        ? el('span', { class: 'muted', 'data-staged': '' }, ' (staged: its start only reboots)')
        : '',
    ),
    el('td', {}, m.decision === undefined ? '–' : batchLabel(m.decision)),
    el('td', {}, when(m.startedAt)),
    el('td', {}, when(m.finishedAt)),
    el('td', {}, decisionText(m)),
    el('td', { class: 'muted' }, image ? changeText(r, m.machine) : (m.operationId ?? '')),
  );
}

/** Facts of the rollout as label/value pairs (only those it has). */
function facts(r: RolloutView): HTMLElement {
  const pairs: [string, string | Node][] = [
    ['id', r.id],
    ...(r.images === undefined
      ? [['pool', r.pool] as [string, string]]
      : [
          ['image policy', r.images.policy] as [string, string],
          ['repository', r.images.repository] as [string, string],
        ]),
    [
      r.images === undefined ? 'release' : 'tag',
      `${r.from === undefined ? '' : `${r.from.version} → `}${r.target.version}`,
    ],
    ['digest', r.target.digest],
    ['created', at(r.createdAt)],
  ];
  if (r.path !== undefined && r.path.length > 1) pairs.push(['path', r.path.join(' → ')]);
  if (r.endReason !== undefined) pairs.push(['ended', r.endReason]);
  if (r.stateReason !== undefined) pairs.push(['why', r.stateReason]);
  if (r.rollbackOf !== undefined)
    pairs.push([
      'rolls back',
      el('a', { href: hashOf({ page: 'rollout', id: r.rollbackOf }) }, r.rollbackOf),
    ]);
  if (r.repairOf !== undefined)
    pairs.push([
      'repairs',
      el('a', { href: hashOf({ page: 'rollout', id: r.repairOf }) }, r.repairOf),
    ]);
  return el(
    'dl',
    { class: 'facts' },
    pairs.flatMap(([k, v]) => [el('dt', {}, k), el('dd', {}, v)]),
  );
}

/** `pool → version`; an image rollout's `policy → tag@digest` (a rebuild keeps its tag). */
function titleOf(id: string, r: RolloutView | undefined): string {
  if (r === undefined) return id;
  if (r.images === undefined) return rolloutHeading(r);
  return `image policy ${r.images.policy} → ${r.target.version}@${r.target.digest.slice(0, 19)}`;
}

/** Draw rollout `r` (undefined: the operator has no such rollout) on its page. */
export function drawRolloutPage(
  id: string,
  r: RolloutView | undefined,
  s: DashboardStateView,
  c: ActContext,
): void {
  find('#rollout-title').textContent = titleOf(id, r);
  const body = find('#rollout-body');
  if (r === undefined) {
    body.replaceChildren(el('p', { class: 'muted' }, `The operator has no rollout ${id}.`));
    return;
  }
  const now = Date.now();
  const opens = startInstants(s.plan, new Set([r.id])).filter((t) => t > now);
  body.replaceChildren(
    el(
      'div',
      { class: `state-${r.state}`, 'data-state': r.state, id: 'rollout-state' },
      stateLabel[r.state],
    ),
    facts(r),
    rolloutActionBar(r, c),
    progressBar(r),
    el('div', { class: 'muted' }, countsLine(r.counts, r.id)),
    el('h3', {}, r.images === undefined ? 'Machines' : 'Workloads'),
    el(
      'table',
      { id: 'rollout-machines' },
      el(
        'thead',
        {},
        el(
          'tr',
          {},
          (r.images === undefined
            ? ['Machine', 'Phase', 'Wave', 'Started', 'Finished', 'Decision', 'Operation']
            : ['Workload', 'Phase', 'Wave', 'Started', 'Finished', 'Decision', 'Image']
          ).map((h) => el('th', {}, h)),
        ),
      ),
      el(
        'tbody',
        {},
        r.machines.map((m) => machineRow(r, m)),
      ),
    ),
    el('h3', {}, 'Timeline'),
    el(
      'div',
      { class: 'timeline' },
      timeline({ rollouts: [r], now, opens, windows: s.plan.windows }),
    ),
  );
}
