// SPDX-License-Identifier: Apache-2.0
/** What the fleet file's shape cannot say: unique ids, and only pools and machines it defines. */
import { ErrorCode } from '../core/errors.ts';
import type { FleetSnapshot } from '../core/rollout/types.ts';

/** A place in the parsed file: keys and list indexes from the top. */
export type Path = readonly (string | number)[];

/** Raise `code` for the issue at `path` (the caller turns it into a located error). */
export type Report = (code: ErrorCode, issue: [path: Path, message: string, key?: string]) => never;

/** Ids are unique and every pool and machine a machine or rollout names is defined. */
export function checkReferences(
  fleet: FleetSnapshot,
  report: Report,
  poolsDeclaredElsewhere = false,
): void {
  unique(
    fleet.pools.map((p) => p.name),
    'pools',
    'name',
    report,
  );
  unique(
    fleet.machines.map((m) => m.id),
    'machines',
    'id',
    report,
  );
  unique(
    fleet.rollouts.map((r) => r.id),
    'rollouts',
    'id',
    report,
  );
  const pools = new Set(fleet.pools.map((p) => p.name));
  const known = `known pools: ${[...pools].join(', ') || 'none'}`;
  fleet.machines.forEach((m, i) => {
    if (!pools.has(m.pool) && !poolsDeclaredElsewhere)
      report(ErrorCode.UnknownPool, [
        ['machines', i, 'pool'],
        `unknown pool "${m.pool}" (${known})`,
      ]);
  });
  const poolOf = new Map(fleet.machines.map((m) => [m.id, m.pool]));
  fleet.rollouts.forEach((r, i) => {
    if (!pools.has(r.pool))
      report(ErrorCode.UnknownPool, [
        ['rollouts', i, 'pool'],
        `unknown pool "${r.pool}" (${known})`,
      ]);
    for (const id of Object.keys(r.machines)) {
      const pool = poolOf.get(id);
      if (pool === r.pool) continue;
      const why =
        pool === undefined
          ? 'is not a machine of the fleet'
          : `is in pool "${pool}", not "${r.pool}"`;
      report(ErrorCode.UnknownMachine, [['rollouts', i, 'machines'], `machine "${id}" ${why}`, id]);
    }
  });
}

function unique(ids: readonly string[], list: string, field: string, report: Report): void {
  const seen = new Map<string, number>();
  ids.forEach((id, i) => {
    const first = seen.get(id);
    if (first !== undefined)
      report(ErrorCode.FleetInvalid, [
        [list, i, field],
        `duplicate ${field} "${id}" (also ${list}[${first}])`,
      ]);
    seen.set(id, i);
  });
}
