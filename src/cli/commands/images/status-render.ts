// SPDX-License-Identifier: Apache-2.0
/**
 * How `molt images status` prints image rollouts (docs/adr/0013 decision 8): the list, newest
 * first, and one rollout with its workloads — the rollout command's progress line and the
 * operator's columns (`protocol/operator-columns.ts`), image by image.
 */
import {
  shownAt,
  progressOf,
  whyOf,
  type MachineProgressView,
  type PrintColumn,
  type RolloutSummaryView,
  type RolloutView,
} from '../../../protocol/index.ts';
import { renderTable } from '../../output.ts';
import { progressLine } from '../rollout/render.ts';
import { shortDigest } from './render.ts';

/** `5s`, `12m`, `3h`, `2d`: how long ago `iso` was at `now`. */
export function age(iso: string, now: number): string {
  const s = Math.max(0, Math.floor((now - Date.parse(iso)) / 1000));
  if (s < 60) return `${String(s)}s`;
  if (s < 3600) return `${String(Math.floor(s / 60))}m`;
  if (s < 48 * 3600) return `${String(Math.floor(s / 3600))}h`;
  return `${String(Math.floor(s / 86_400))}d`;
}

/** `host/acme/web:1.8.0-rev2@sha256:…` → `1.8.0-rev2@sha256:abcd1234…` (`wide`: unchanged). */
export function shortRef(image: string, wide = false): string {
  if (wide) return image;
  const at = image.indexOf('@');
  const named = at < 0 ? image : image.slice(0, at);
  const colon = named.lastIndexOf(':');
  const tag = colon > named.lastIndexOf('/') ? named.slice(colon + 1) : named;
  return at < 0 ? tag : `${tag}@${shortDigest(image.slice(at + 1), 8)}`;
}

/** `rollback of X`, `repairs X`, or why it ended. */
function note(r: RolloutSummaryView): string {
  return [
    r.rollbackOf === undefined ? '' : `rollback of ${r.rollbackOf}`,
    r.repairOf === undefined ? '' : `repairs ${r.repairOf}`,
    r.endReason ?? '',
  ]
    .filter((x) => x !== '')
    .join('; ');
}

/** Columns of `molt images status` (`wide`: also from, failed, note, created). */
export function imageRolloutColumns(
  now: number,
  wide: boolean,
): readonly PrintColumn<RolloutSummaryView>[] {
  const base: PrintColumn<RolloutSummaryView>[] = [
    { header: 'ID', value: (r) => r.id },
    { header: 'POLICY', value: (r) => r.images?.policy ?? '-' },
    { header: 'TAG', value: (r) => r.target.version },
    { header: 'DIGEST', value: (r) => shortDigest(r.target.digest, 12, false) },
    { header: 'STATE', value: (r) => r.state },
    { header: 'PROGRESS', value: (r) => progressOf(r.counts) },
    { header: 'AGE', value: (r) => age(r.createdAt, now) },
  ];
  if (!wide) return base;
  return [
    ...base,
    { header: 'FAILED', value: (r) => String(r.counts.Failed + r.counts.RolledBack) },
    {
      header: 'FROM',
      value: (r) =>
        r.from === undefined ? '-' : `${r.from.version}@${shortDigest(r.from.digest, 12, false)}`,
    },
    { header: 'CREATED', value: (r, now) => shownAt(r.createdAt, now) },
    { header: 'NOTE', value: note },
  ];
}

/** The image rollouts, newest first. */
export function describeImageRollouts(
  list: readonly RolloutSummaryView[],
  now: number,
  wide: boolean,
): string {
  if (list.length === 0) return 'no image rollouts\n';
  const newest = list.toSorted(
    (a, b) => Date.parse(b.createdAt) - Date.parse(a.createdAt) || (a.id < b.id ? 1 : -1),
  );
  return renderTable(imageRolloutColumns(now, wide), newest);
}

/** `from → to` of each distinct change of `unit`; a unit not started yet: `→ <target>`. */
function fromTo(r: RolloutView, unit: string, wide: boolean): string {
  const changes = r.images?.units[unit]?.changes ?? [];
  if (changes.length === 0) {
    const to = `${r.images?.repository ?? ''}:${r.target.version}@${r.target.digest}`;
    return `→ ${shortRef(to, wide)}`;
  }
  const pairs = new Set(changes.map((c) => `${shortRef(c.from, wide)} → ${shortRef(c.to, wide)}`));
  return [...pairs].join(', ');
}

const unitColumns = (
  r: RolloutView,
  wide: boolean,
): readonly PrintColumn<MachineProgressView>[] => [
  { header: 'UNIT', value: (m) => m.machine },
  { header: 'PHASE', value: (m) => m.phase },
  { header: 'FROM → TO', value: (m) => fromTo(r, m.machine, wide) },
  { header: 'STARTED', value: (m, now) => shownAt(m.startedAt, now) },
  { header: 'DECISION', value: (m) => m.decision?.action ?? '-' },
  { header: 'REASON', value: whyOf },
];

/** `molt images status ROLLOUT`: the rollout, then its workloads. */
export function describeImageRollout(r: RolloutView, wide: boolean): string {
  const i = r.images;
  const lines = [
    `rollout:  ${r.id}`,
    `policy:   ${i?.policy ?? '-'} (${i?.repository ?? '-'})`,
    `target:   ${r.target.version} (${r.target.digest})`,
    ...(r.from === undefined ? [] : [`from:     ${r.from.version} (${r.from.digest})`]),
    ...(r.rollbackOf === undefined ? [] : [`reverses: ${r.rollbackOf}`]),
    ...(r.repairOf === undefined ? [] : [`repairs:  ${r.repairOf}`]),
    `state:    ${r.state}${r.endReason === undefined ? '' : ` (${r.endReason})`}`,
    `created:  ${shownAt(r.createdAt, Date.now())}`,
    `progress: ${progressLine(r, 'workloads')}`,
  ];
  const table =
    r.machines.length === 0
      ? 'no workload yet (the image driver has not planned it)\n'
      : renderTable(unitColumns(r, wide), r.machines);
  return `${lines.join('\n')}\n\n${table}`;
}

/** What `molt images rollback` would put back, unit by unit (`to → from`). */
export function describeRollbackPreview(r: RolloutView): string {
  const units = Object.entries(r.images?.units ?? {}).filter(([, u]) => u.changes.length > 0);
  if (units.length === 0) return `rollout ${r.id} changed no workload: a rollback puts none back\n`;
  const lines = units.flatMap(([id, u]) =>
    u.changes.map((c) => `  ${id} ${c.container}: ${shortRef(c.to)} → ${shortRef(c.from)}\n`),
  );
  return `rolling back ${r.id} puts ${String(units.length)} workload(s) back:\n${lines.join('')}`;
}
