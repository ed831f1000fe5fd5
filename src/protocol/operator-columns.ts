// SPDX-License-Identifier: Apache-2.0
/** Print columns of the operator's views (`molt rollout`, `molt machine`; later the dashboard). */
import type {
  MachineProgressView,
  MachineView,
  RolloutCounts,
  RolloutSummaryView,
} from './operator.ts';
import type { BlockView } from './operator-blocks.ts';
import { shownAt, type PrintColumn } from './releases.ts';

export { shownAt };

const shortDigest = (d: string): string => d.replace(/^sha256:/, '').slice(0, 12);
/** `3/6 done` where done = succeeded (+ skipped: already on the target). */
export function progressOf(c: RolloutCounts): string {
  return `${String(c.Succeeded + c.skipped)}/${String(c.total)}`;
}

/** Columns of `molt rollout list`. */
export const rolloutColumns: readonly PrintColumn<RolloutSummaryView>[] = [
  { header: 'ROLLOUT', value: (r) => r.id },
  { header: 'POOL', value: (r) => r.pool },
  {
    header: 'TARGET',
    value: (r) =>
      `${r.target.version} (${shortDigest(r.target.digest)})${r.rollbackOf === undefined ? '' : ' [rollback]'}`,
  },
  { header: 'STATE', value: (r) => r.state },
  { header: 'DONE', value: (r) => progressOf(r.counts) },
  { header: 'IN FLIGHT', value: (r) => String(r.counts.InFlight) },
  { header: 'FAILED', value: (r) => String(r.counts.Failed + r.counts.RolledBack) },
  { header: 'CREATED', value: (r, now) => shownAt(r.createdAt, now) },
];

/** Why a machine of a rollout is where it is: its progress's reason, else the planner's. */
export function whyOf(m: MachineProgressView): string {
  return (
    m.reason ??
    (m.decision?.reason === undefined
      ? ''
      : `${m.decision.reason.code}: ${m.decision.reason.message}`)
  );
}

/** Columns of the machine table under `molt rollout status`. */
export const rolloutMachineColumns: readonly PrintColumn<MachineProgressView>[] = [
  { header: 'MACHINE', value: (m) => m.machine },
  { header: 'PHASE', value: (m) => (m.staged === true ? `${m.phase} (staged)` : m.phase) },
  { header: 'DECISION', value: (m) => m.decision?.action ?? '-' },
  { header: 'WHY', value: (m) => whyOf(m) },
  { header: 'STARTED', value: (m, now) => shownAt(m.startedAt, now) },
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
    value: (m, now) =>
      m.hold === undefined ? '' : `until ${shownAt(m.hold.until, now)}: ${m.hold.reason}`,
  },
];

/** Columns of `molt releases blocked`. */
export const blockColumns: readonly PrintColumn<BlockView>[] = [
  { header: 'RELEASE', value: (b) => b.version ?? '-' },
  { header: 'DIGEST', value: (b) => shortDigest(b.digest) },
  { header: 'POOL', value: (b) => b.pool ?? '(all)' },
  { header: 'BY', value: (b) => b.by },
  { header: 'SINCE', value: (b, now) => shownAt(b.at, now) },
  { header: 'REASON', value: (b) => b.reason },
];

/** `molt rollout list -o wide`: also where it came from, its path, what waits, and why it ended. */
export const rolloutWideColumns: readonly PrintColumn<RolloutSummaryView>[] = [
  ...rolloutColumns,
  { header: 'PENDING', value: (r) => String(r.counts.Pending - r.counts.skipped) },
  { header: 'QUARANTINED', value: (r) => String(r.counts.Skipped) },
  { header: 'FROM', value: (r) => r.from?.version ?? '-' },
  { header: 'PATH', value: (r) => (r.path === undefined ? '-' : r.path.join('→')) },
  { header: 'DIGEST', value: (r) => r.target.digest },
  {
    header: 'NOTE',
    value: (r) =>
      r.endReason ??
      r.stateReason ??
      (r.rollbackOf === undefined ? undefined : `reverses ${r.rollbackOf}`) ??
      (r.repairOf === undefined ? '' : `repairs ${r.repairOf}`),
  },
];

/** `A:1.0.0* B:1.1.0`: each slot's version, `*` on the booted one. */
function slotsOf(m: MachineView): string {
  const o = m.observed;
  if (o?.slots === undefined) return '-';
  return o.slots
    .map((s) => `${s.slot}:${s.version ?? s.status}${s.slot === o.bootedSlot ? '*' : ''}`)
    .join(' ');
}

/** `molt machine list -o wide`: also cluster, slots, the last result, agent, labels, when seen. */
export const machineWideColumns: readonly PrintColumn<MachineView>[] = [
  { header: 'MACHINE', value: (m) => m.id },
  { header: 'POOL', value: (m) => m.pool },
  { header: 'ROLE', value: (m) => m.role },
  { header: 'CLUSTER', value: (m) => m.cluster ?? '-' },
  { header: 'VERSION', value: (m) => m.observed?.version ?? '-' },
  { header: 'STATE', value: observed },
  { header: 'SLOTS', value: slotsOf },
  { header: 'LAST', value: (m) => m.observed?.last?.result ?? '-' },
  { header: 'AGENT', value: (m) => m.endpoint },
  {
    header: 'LABELS',
    value: (m) =>
      Object.entries(m.labels)
        .map(([k, v]) => `${k}=${v}`)
        .join(',') || '-',
  },
  { header: 'SEEN', value: (m, now) => shownAt(m.observed?.at, now) },
  {
    header: 'HOLD',
    value: (m, now) =>
      m.hold === undefined
        ? ''
        : `until ${shownAt(m.hold.until, now)} by ${m.hold.by ?? 'unknown'}: ${m.hold.reason}`,
  },
];

/** `molt releases blocked -o wide`: the whole digest and the rollout whose halt blocked it. */
export const blockWideColumns: readonly PrintColumn<BlockView>[] = [
  { header: 'RELEASE', value: (b) => b.version ?? '-' },
  { header: 'DIGEST', value: (b) => b.digest },
  { header: 'POOL', value: (b) => b.pool ?? '(all)' },
  { header: 'BY', value: (b) => b.by },
  { header: 'SINCE', value: (b, now) => shownAt(b.at, now) },
  { header: 'ROLLOUT', value: (b) => b.rollout ?? '-' },
  { header: 'REASON', value: (b) => b.reason },
];
