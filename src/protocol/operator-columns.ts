// SPDX-License-Identifier: Apache-2.0
/** Print columns of the operator's views (`molt rollout`, `molt machine`; later the dashboard). */
import type {
  MachineProgressView,
  MachineView,
  RolloutCounts,
  RolloutSummaryView,
} from './operator.ts';
import type { BlockView } from './operator-blocks.ts';
import type { PrintColumn } from './releases.ts';

const shortDigest = (d: string): string => d.replace(/^sha256:/, '').slice(0, 12);
/** `2026-11-24T10:00:00.000Z` → `2026-11-24 10:00`. */
const minute = (iso: string | undefined): string =>
  iso === undefined ? '-' : iso.slice(0, 16).replace('T', ' ');

/** `3/6 done` where done = succeeded (+ skipped: already on the target). */
export function progressOf(c: RolloutCounts): string {
  return `${String(c.Succeeded + c.skipped)}/${String(c.total)}`;
}

/** Columns of `molt rollout list`. */
export const rolloutColumns: readonly PrintColumn<RolloutSummaryView>[] = [
  { header: 'ROLLOUT', value: (r) => r.id },
  { header: 'POOL', value: (r) => r.pool },
  { header: 'TARGET', value: (r) => `${r.target.version} (${shortDigest(r.target.digest)})` },
  { header: 'STATE', value: (r) => r.state },
  { header: 'DONE', value: (r) => progressOf(r.counts) },
  { header: 'IN FLIGHT', value: (r) => String(r.counts.InFlight) },
  { header: 'FAILED', value: (r) => String(r.counts.Failed + r.counts.RolledBack) },
  { header: 'CREATED', value: (r) => minute(r.createdAt) },
];

/** Columns of the machine table under `molt rollout status`. */
export const rolloutMachineColumns: readonly PrintColumn<MachineProgressView>[] = [
  { header: 'MACHINE', value: (m) => m.machine },
  { header: 'PHASE', value: (m) => m.phase },
  { header: 'DECISION', value: (m) => m.decision?.action ?? '-' },
  {
    header: 'WHY',
    value: (m) =>
      m.reason ??
      (m.decision?.reason === undefined
        ? ''
        : `${m.decision.reason.code}: ${m.decision.reason.message}`),
  },
  { header: 'STARTED', value: (m) => minute(m.startedAt) },
];

function observed(m: MachineView): string {
  const o = m.observed;
  if (o === undefined) return 'not observed';
  if (o.rebooting === true) return 'rebooting';
  if (!o.reachable) return 'unreachable';
  if (o.operation !== undefined) return o.operation;
  return o.available ? 'available' : (o.phase ?? 'unavailable');
}

/** Columns of `molt machine list`. */
export const machineColumns: readonly PrintColumn<MachineView>[] = [
  { header: 'MACHINE', value: (m) => m.id },
  { header: 'POOL', value: (m) => m.pool },
  { header: 'ROLE', value: (m) => m.role },
  { header: 'VERSION', value: (m) => m.observed?.version ?? '-' },
  { header: 'STATE', value: observed },
  {
    header: 'HOLD',
    value: (m) => (m.hold === undefined ? '' : `until ${minute(m.hold.until)}: ${m.hold.reason}`),
  },
];

/** Columns of `molt releases blocked`. */
export const blockColumns: readonly PrintColumn<BlockView>[] = [
  { header: 'RELEASE', value: (b) => b.version ?? '-' },
  { header: 'DIGEST', value: (b) => shortDigest(b.digest) },
  { header: 'POOL', value: (b) => b.pool ?? '(all)' },
  { header: 'BY', value: (b) => b.by },
  { header: 'SINCE', value: (b) => minute(b.at) },
  { header: 'REASON', value: (b) => b.reason },
];
