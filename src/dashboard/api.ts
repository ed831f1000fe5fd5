// SPDX-License-Identifier: Apache-2.0
/**
 * The operator's reads the page shows, from the listener that served it (same origin). The answers
 * are protocol's views, typed but not re-validated here: the page loads no schema library (the
 * browser runs these modules as they are, without a bundler), and the operator builds every answer
 * from those very schemas.
 */
import type {
  DashboardMachineView,
  PlanView,
  RolloutSummaryView,
  RolloutView,
} from '../protocol/operator.ts';

async function get<T>(path: string): Promise<T> {
  const res = await fetch(path, { headers: { accept: 'application/json' } });
  if (!res.ok) throw new Error(`${path}: ${res.status}`);
  return (await res.json()) as T;
}

/** Everything one refresh of the page draws. */
export interface FleetSnapshot {
  readonly machines: readonly DashboardMachineView[];
  /** Every rollout, in the order `/v1/rollouts` lists them, with their machines. */
  readonly rollouts: readonly RolloutView[];
  readonly plan: PlanView;
}

/** Read the machines, the rollouts (each in full) and the planner's decisions. */
export async function readSnapshot(): Promise<FleetSnapshot> {
  const [machines, summaries, plan] = await Promise.all([
    get<DashboardMachineView[]>('/v1/machines'),
    get<RolloutSummaryView[]>('/v1/rollouts'),
    get<PlanView>('/v1/plan'),
  ]);
  const rollouts = await Promise.all(
    summaries.map((r) => get<RolloutView>(`/v1/rollouts/${encodeURIComponent(r.id)}`)),
  );
  return { machines, rollouts, plan };
}
