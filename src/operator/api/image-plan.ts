// SPDX-License-Identifier: Apache-2.0
/**
 * The image driver's last plan as the API shows it (docs/adr/0013 decision 8): `GET /v1/images/plan`,
 * and its decisions joined to an image rollout's units in the rollout views.
 */
import type { MachineDecision } from '../../core/rollout/types.ts';
import { iso } from '../../core/time.ts';
import type { ImagePlanView } from '../../protocol/operator-image-plan.ts';
import type { ImagePlanRecord } from '../images/last-plan.ts';
import { decisionKey, decisionView } from './views.ts';

/** The last plan's decisions by `rollout/unit` (none before the first pass). */
export function imageDecisions(
  last: ImagePlanRecord | undefined,
): ReadonlyMap<string, MachineDecision> {
  return new Map((last?.plan.decisions ?? []).map((d) => [decisionKey(d.rollout, d.machine), d]));
}

/** `GET /v1/images/plan`: the last pass's plan; no pass yet is an empty plan without `at`. */
export function imagePlanView(last: ImagePlanRecord | undefined, leader: boolean): ImagePlanView {
  if (last === undefined) return { leader, rollouts: [], decisions: [] };
  const verdicts = new Map(last.plan.rollouts.map((v) => [v.rollout, v]));
  return {
    at: iso(last.plan.at),
    leader,
    rollouts: last.rollouts.map((r) => {
      const v = verdicts.get(r.id);
      return {
        rollout: r.id,
        pool: r.pool,
        policy: r.images?.policy ?? '',
        target: { version: r.target.version, digest: r.target.digest },
        state: r.state,
        ...(v !== undefined && { verdict: v.verdict }),
        ...(v?.message !== undefined && { message: v.message }),
      };
    }),
    decisions: last.plan.decisions.map((d) => ({
      rollout: d.rollout,
      machine: d.machine,
      ...decisionView(d),
    })),
  };
}
