// SPDX-License-Identifier: Apache-2.0
/**
 * The operator's Prometheus metrics (`GET /metrics`, text exposition format 0.0.4, written by hand:
 * a dozen series do not need a client library). Gauges are computed from the store at scrape
 * time; counters count what this process did since it started (only the leader starts machines,
 * so summing over operators gives the fleet's total), fed by {@link countingStore} and the loop's
 * `onPass` hook.
 */
import type { MachinePhase, Rollout } from '../../core/rollout/types.ts';
import { MachinePhases, RolloutStates } from '../../core/rollout/vocabulary.ts';
import type { OperatorStore, StoredState } from '../ports/store.ts';
import { family, sample } from './exposition.ts';
import { fleetFamilies, type FleetLockSlots } from './metrics-fleet.ts';
import type { GmFinding } from '../images/gm-check.ts';
import { imageFamilies } from './metrics-images.ts';
import { notifyFamilies, NotificationMetrics } from './metrics-notify.ts';
import type { ObservationBook } from './observations.ts';
import { PassHistogram } from './pass-histogram.ts';

/** One reconcile pass, as the loop reports it. */
export interface PassReport {
  /** Epoch ms. */
  readonly startedAt: number;
  readonly durationMs: number;
  readonly ok: boolean;
}

/** Counters of this process. */
export class OperatorMetrics {
  readonly starts = new Map<string, number>();
  failures = 0;
  passes = { ok: 0, failed: 0 };
  lastPass: PassReport | undefined;
  /** Every pass's duration, failed ones included (a failed pass is usually a slow one). */
  readonly passDurations = new PassHistogram();
  /** Webhook deliveries, retries, drops and backlogs, by sink (docs/adr/0009). */
  readonly notifications: NotificationMetrics;

  /** `sinks`: the config's notification sinks, each counted from 0. */
  constructor(sinks: readonly string[] = []) {
    this.notifications = new NotificationMetrics(sinks);
  }

  recordStart(pool: string): void {
    this.starts.set(pool, (this.starts.get(pool) ?? 0) + 1);
  }

  recordPass(p: PassReport): void {
    this.lastPass = p;
    this.passDurations.observe(p.durationMs);
    if (p.ok) this.passes.ok++;
    else this.passes.failed++;
  }
}

/**
 * `store`, counting each recorded start (by pool) and each machine result that is a failure
 * (`Failed`, `RolledBack`) into `metrics`. Every other call passes through unchanged.
 */
export function countingStore(store: OperatorStore, metrics: OperatorMetrics): OperatorStore {
  return {
    read: () => store.read(),
    putMachine: (m) => store.putMachine(m),
    removeMachine: (id) => store.removeMachine(id),
    createRollout: (r) => store.createRollout(r),
    updateRollout: (id, change) => store.updateRollout(id, change),
    async recordStart(start, progress) {
      await store.recordStart(start, progress);
      metrics.recordStart(start.pool);
    },
    pruneStarts: (before) => store.pruneStarts(before),
    setHold: (machine, hold) => store.setHold(machine, hold),
    putBlock: (b) => store.putBlock(b),
    removeBlock: (digest, pool) => store.removeBlock(digest, pool),
    async appendHistory(event) {
      const stored = await store.appendHistory(event);
      const phase = event.data?.['phase'];
      if (event.kind === 'machine-result' && (phase === 'Failed' || phase === 'RolledBack'))
        metrics.failures++;
      return stored;
    },
    history: (options) => store.history(options),
    historyHead: () => store.historyHead(),
    notifyCursor: (sink) => store.notifyCursor(sink),
    advanceNotifyCursor: (sink, seq) => store.advanceNotifyCursor(sink, seq),
    close: () => store.close(),
    kubeUpgrades: (cluster) => store.kubeUpgrades(cluster),
    createKubeUpgrade: (u) => store.createKubeUpgrade(u),
    updateKubeUpgrade: (cluster, id, change) => store.updateKubeUpgrade(cluster, id, change),
    kubeDesired: (cluster) => store.kubeDesired(cluster),
    putKubeDesired: (record) => store.putKubeDesired(record),
  };
}

function phaseCounts(r: Rollout, pool: readonly string[]): Record<MachinePhase, number> {
  const counts = Object.fromEntries(MachinePhases.map((p) => [p, 0])) as Record<
    MachinePhase,
    number
  >;
  const ids = new Set([...pool, ...Object.keys(r.machines)]);
  for (const id of ids) counts[r.machines[id]?.phase ?? 'Pending']++;
  return counts;
}

function rolloutFamilies(state: StoredState): string[] {
  const byState = RolloutStates.map((s) =>
    sample(
      'molt_operator_rollouts',
      { state: s },
      state.rollouts.filter((r) => r.state === s).length,
    ),
  );
  // Completed rollouts only ever accumulate: their per-machine series would grow without bound.
  const machines = state.rollouts
    .filter((r) => r.state !== 'Completed')
    .flatMap((r) => {
      const pool = state.machines.filter((m) => m.pool === r.pool).map((m) => m.id);
      const counts = phaseCounts(r, pool);
      return MachinePhases.map((phase) =>
        sample(
          'molt_operator_rollout_machines',
          { rollout: r.id, pool: r.pool, phase },
          counts[phase],
        ),
      );
    });
  return [
    ...family('molt_operator_rollouts', 'gauge', 'Rollouts by state.', byState),
    ...family(
      'molt_operator_rollout_machines',
      'gauge',
      "Machines of each unfinished rollout's pool by phase.",
      machines,
    ),
  ];
}

/** What a scrape needs. */
export interface MetricsInput {
  readonly state: StoredState;
  readonly metrics: OperatorMetrics;
  readonly pools: readonly string[];
  readonly leader: boolean;
  readonly now: number;
  /** What the loop last saw of each machine (agent reachability, the release it boots). */
  readonly observations?: ObservationBook;
  /** Each FleetLock group's slots and holders, as the store has them. */
  readonly fleetLock?: readonly FleetLockSlots[];
  /** The GM checks' last findings (docs/adr/0013); none before the first or on a standby. */
  readonly gm?: readonly GmFinding[] | undefined;
}

/** The exposition text. */
export function renderMetrics(i: MetricsInput): string {
  const m = i.metrics;
  const pass = m.lastPass;
  const held = Object.values(i.state.holds).filter((h) => h.until > i.now).length;
  const lines = [
    ...rolloutFamilies(i.state),
    ...family(
      'molt_operator_machines',
      'gauge',
      'Managed machines by pool.',
      i.pools.map((p) =>
        sample(
          'molt_operator_machines',
          { pool: p },
          i.state.machines.filter((x) => x.pool === p).length,
        ),
      ),
    ),
    ...family('molt_operator_machines_held', 'gauge', 'Machines under an unexpired hold.', [
      sample('molt_operator_machines_held', {}, held),
    ]),
    ...family(
      'molt_operator_machine_starts_total',
      'counter',
      'Machine upgrades this operator recorded as started, by pool.',
      i.pools.map((p) =>
        sample('molt_operator_machine_starts_total', { pool: p }, m.starts.get(p) ?? 0),
      ),
    ),
    ...family(
      'molt_operator_machine_failures_total',
      'counter',
      'Machine upgrades this operator saw fail or roll back.',
      [sample('molt_operator_machine_failures_total', {}, m.failures)],
    ),
    ...family('molt_operator_reconcile_passes_total', 'counter', 'Reconcile passes by result.', [
      sample('molt_operator_reconcile_passes_total', { result: 'ok' }, m.passes.ok),
      sample('molt_operator_reconcile_passes_total', { result: 'failed' }, m.passes.failed),
    ]),
    ...family(
      'molt_operator_reconcile_pass_duration_seconds',
      'histogram',
      'Duration of reconcile passes.',
      m.passDurations.lines('molt_operator_reconcile_pass_duration_seconds'),
    ),
    ...family(
      'molt_operator_last_pass_duration_seconds',
      'gauge',
      'Duration of the last reconcile pass (0 before the first).',
      [sample('molt_operator_last_pass_duration_seconds', {}, (pass?.durationMs ?? 0) / 1000)],
    ),
    ...family(
      'molt_operator_last_pass_timestamp_seconds',
      'gauge',
      'Unix time the last reconcile pass started (0 before the first).',
      [sample('molt_operator_last_pass_timestamp_seconds', {}, (pass?.startedAt ?? 0) / 1000)],
    ),
    ...family('molt_operator_leader', 'gauge', '1 while this operator leads, else 0.', [
      sample('molt_operator_leader', {}, i.leader ? 1 : 0),
    ]),
    ...fleetFamilies(i),
    ...notifyFamilies(m.notifications),
    ...imageFamilies(i.gm ?? []),
  ];
  return lines.join('\n') + '\n';
}

/** The content type of the exposition format. */
export const metricsContentType = 'text/plain; version=0.0.4; charset=utf-8';
