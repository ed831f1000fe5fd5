// SPDX-License-Identifier: Apache-2.0
/** Tables of `molt cluster kubernetes`: machines × components, a plan and its steps. */
import type {
  KubeClusterStatusView,
  KubePlanAnswer,
  KubePlanView,
  KubeStepView,
  PrintColumn,
} from '../../../protocol/index.ts';
import { renderTable } from '../../output.ts';

interface ComponentRow {
  readonly machine: string;
  readonly name: string;
  readonly version?: string | undefined;
  readonly emulatedVersion?: string | undefined;
  readonly healthy?: boolean;
  readonly error?: string | undefined;
}

const componentColumns: readonly PrintColumn<ComponentRow>[] = [
  { header: 'MACHINE', value: (r) => r.machine },
  { header: 'COMPONENT', value: (r) => r.name },
  { header: 'VERSION', value: (r) => r.version ?? '-' },
  { header: 'EMULATED', value: (r) => r.emulatedVersion ?? '-' },
  {
    header: 'HEALTHY',
    value: (r) =>
      r.error !== undefined ? `unreachable: ${r.error}` : r.healthy === true ? 'yes' : 'no',
  },
];

const minute = (iso: string | undefined): string => (iso === undefined ? '-' : iso.slice(11, 19));

const stepColumns: readonly PrintColumn<KubeStepView>[] = [
  { header: 'STEP', value: (s) => s.id },
  { header: 'STATE', value: (s) => s.state },
  {
    header: 'SPEC',
    value: (s) =>
      s.version === undefined
        ? '-'
        : `${s.version}${s.emulatedVersion === undefined ? '' : ` ~${s.emulatedVersion}`}`,
  },
  { header: 'STARTED', value: (s) => minute(s.startedAt) },
  { header: 'DONE', value: (s) => minute(s.finishedAt) },
  { header: 'ERROR', value: (s) => s.error ?? '' },
];

/** One line saying what a plan does. */
export function planLine(p: KubePlanView): string {
  const what =
    p.kind === 'finalize'
      ? `finalize ${p.target.version} (drop the emulation)`
      : `${p.kind} ${p.from.version} → ${p.target.version}${p.target.emulatedVersion === undefined ? '' : ` emulating ${p.target.emulatedVersion}`}`;
  return `plan ${p.id}: ${what} — ${p.phase}, asked by ${p.by}${p.reason === undefined ? '' : `\n  reason: ${p.reason}`}\n`;
}

/** A plan with its checks and steps. */
export function describePlan(p: KubePlanView): string {
  const checks = p.checks
    .map((c) => `  ${c.ok ? 'ok  ' : 'FAIL'} ${c.name}: ${c.message}\n`)
    .join('');
  const steps =
    p.steps.length === 0 ? '  (no step: nothing changes)\n' : renderTable(stepColumns, p.steps);
  const undo = p.rollback.length === 0 ? '' : `rollback:\n${renderTable(stepColumns, p.rollback)}`;
  return `${planLine(p)}checks:\n${checks}steps:\n${steps}${undo}`;
}

/** What `upgrade|finalize|rollback` print. */
export function describeAnswer(a: KubePlanAnswer): string {
  const head = a.dryRun
    ? 'dry run: nothing changed\n'
    : a.changed
      ? ''
      : 'nothing to do: the cluster already runs it\n';
  const follow = a.changed
    ? `  follow it: molt cluster kubernetes status --cluster ${a.plan.cluster}\n`
    : '';
  return `${head}${describePlan(a.plan)}${follow}`;
}

/** `molt cluster kubernetes status`. */
export function describeStatus(s: KubeClusterStatusView): string {
  const desired =
    s.desired === undefined
      ? 'no desired Kubernetes'
      : `desired ${s.desired.version}${s.desired.finalize ? ' (finalized)' : ''}, set by ${s.desired.by}`;
  const rows = s.machines.flatMap((m): ComponentRow[] =>
    m.error !== undefined
      ? [{ machine: m.machine, name: '-', error: m.error }]
      : m.components.map((c) => ({ machine: m.machine, ...c })),
  );
  const plan = s.plan === undefined ? 'no plan yet\n' : describePlan(s.plan);
  return `cluster ${s.cluster}: ${desired}\n${renderTable(componentColumns, rows)}${plan}`;
}
