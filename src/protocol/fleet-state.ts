// SPDX-License-Identifier: Apache-2.0
/**
 * A fleet's observed state, for `molt plan --fleet F --state S`: what the fleet *is* — each
 * machine's release, availability, hold and wariness, the rollouts so far, their starts and the
 * control-plane lease holders — kept apart from the fleet file, which says what it *should be*
 * (pools, policies, machines and where they belong). The operator observes all of this itself;
 * the file lets a person plan "what if" offline. A fleet file may still carry these fields (older
 * files do); the state file's values win.
 *
 * ```yaml
 * machines:                       # only machines the fleet file defines
 *   - {id: w-1, version: 1.0.0, digest: "sha256:…", available: true,
 *      hold: {reason: …, until: <time>}, wariness: 0.3}
 * rollouts: [{id: r1, pool: workers, target: {version: 1.1.0, digest: "sha256:…"}, state: Active, createdAt: <time>}]
 * starts: [{machine: w-1, pool: workers, rollout: r1, at: <time>}]
 * leases: {lab: cp-1}
 * ```
 */
import { z } from 'zod';
import { ErrorCode } from '../core/errors.ts';
import type { FleetSnapshot, Machine } from '../core/rollout/types.ts';
import { fleetError, parseLocated } from './fleet.ts';
import { checkReferences, type Report } from './fleet-references.ts';
import { name, rolloutSchema, startsSchema, time } from './fleet-schema.ts';

const machineState = z.strictObject({
  id: name,
  version: z.string({ error: 'must be a string (quote versions like "1.0")' }).optional(),
  digest: z.string().optional(),
  available: z.boolean().optional(),
  hold: z.strictObject({ reason: z.string(), until: time }).optional(),
  wariness: z.number().min(0).lt(1, 'must be below 1').optional(),
});

export const FleetStateFile = z.strictObject({
  machines: z.array(machineState).default([]),
  rollouts: z.array(rolloutSchema).default([]),
  starts: startsSchema,
  leases: z.record(z.string(), z.string()).optional(),
});

type MachineState = z.infer<typeof machineState>;

const observed = (m: Machine, s: MachineState): Machine => ({
  ...m,
  ...(s.version !== undefined && { version: s.version }),
  ...(s.digest !== undefined && { digest: s.digest }),
  ...(s.available !== undefined && { available: s.available }),
  ...(s.hold !== undefined && { hold: s.hold }),
  ...(s.wariness !== undefined && { wariness: s.wariness }),
});

/**
 * `fleet` with the state file `text` laid over it. `MOLT_FLEET_INVALID` for its shape or a
 * rollout id the fleet file has too, `MOLT_UNKNOWN_MACHINE` for a machine the fleet file does not
 * define, `MOLT_UNKNOWN_POOL` for a rollout of an unknown pool — each at `source:line:col`.
 */
export function withFleetState(fleet: FleetSnapshot, text: string, source: string): FleetSnapshot {
  const { data, where } = parseLocated(FleetStateFile, text, source);
  const report: Report = (code, issue) => {
    throw fleetError(code, source, [where.issue(...issue)]);
  };
  const byId = new Map(data.machines.map((s) => [s.id, s] as const));
  data.machines.forEach((s, i) => {
    if (!fleet.machines.some((m) => m.id === s.id))
      report(ErrorCode.UnknownMachine, [
        ['machines', i, 'id'],
        `machine "${s.id}" is not in the fleet file`,
      ]);
  });
  const ids = new Set(fleet.rollouts.map((r) => r.id));
  data.rollouts.forEach((r, i) => {
    if (ids.has(r.id))
      report(ErrorCode.FleetInvalid, [
        ['rollouts', i, 'id'],
        `rollout "${r.id}" is in the fleet file too`,
      ]);
  });
  const machines = fleet.machines.map((m) => {
    const s = byId.get(m.id);
    return s === undefined ? m : observed(m, s);
  });
  // Only the state file's rollouts are checked here; the fleet file's were when it was read.
  checkReferences({ ...fleet, machines, rollouts: data.rollouts }, report);
  const leases = { ...fleet.leases, ...data.leases };
  return {
    ...fleet,
    machines,
    rollouts: [...fleet.rollouts, ...data.rollouts],
    starts: [...fleet.starts, ...data.starts],
    ...(Object.keys(leases).length > 0 && { leases }),
  };
}
