// SPDX-License-Identifier: Apache-2.0
/**
 * `molt machine list`'s filters (`--pool`, `--role`, `-l`), and why a filter that leaves nothing
 * did: an empty table alone reads as "no machines", and `-l role=worker` (role is a field, not a
 * label) looked exactly like a fleet without workers.
 */
import { didYouMean } from '../../../core/near-matches.ts';
import type { MachineView } from '../../../protocol/index.ts';
import { matchesLabels, type LabelRequirement } from '../../label-selector.ts';

export interface MachineFilter {
  readonly pool?: string | undefined;
  readonly role?: string | undefined;
  readonly selector: readonly LabelRequirement[];
}

/** The machines `f` keeps. */
export function filterMachines(all: readonly MachineView[], f: MachineFilter): MachineView[] {
  return all.filter(
    (m) =>
      (f.pool === undefined || m.pool === f.pool) &&
      (f.role === undefined || m.role === f.role) &&
      matchesLabels(f.selector, m.labels),
  );
}

const values = (all: readonly MachineView[], of: (m: MachineView) => string): string[] =>
  [...new Set(all.map(of))].sort();

/** A field's filter that no machine has: its values there, and the near one. */
function fieldMiss(all: readonly MachineView[], field: 'pool' | 'role', want: string): string {
  const known = values(all, (m) => m[field]);
  if (known.includes(want)) return '';
  return `no machine has ${field} ${want} (${field}s here: ${known.join(', ')})${didYouMean(want, known)}`;
}

/** Label keys the selector asks to have a value that no machine has at all. */
function labelMiss(all: readonly MachineView[], selector: readonly LabelRequirement[]): string {
  const keys = new Set(all.flatMap((m) => Object.keys(m.labels)));
  const missing = selector
    .filter((r) => (r.op === 'equals' || r.op === 'exists') && !keys.has(r.key))
    .map((r) => r.key);
  if (missing.length === 0) return '';
  const fields = missing.filter((k) => k === 'pool' || k === 'role');
  const tip =
    fields.length > 0
      ? `; ${fields.join(' and ')} ${fields.length > 1 ? 'are fields' : 'is a field'}, not a label: use ${fields.map((k) => `--${k}`).join(', ')}`
      : '';
  const here = keys.size > 0 ? [...keys].sort().join(', ') : 'none';
  return `no machine has label ${missing.join(', ')} (labels here: ${here})${tip}`;
}

/**
 * Why `f` kept none of `all`, for stderr; undefined when it kept some, or there was nothing to
 * keep (an empty fleet says so itself).
 */
export function whyNone(
  all: readonly MachineView[],
  f: MachineFilter,
  kept: number,
): string | undefined {
  if (kept > 0 || all.length === 0) return undefined;
  const reasons = [
    f.pool === undefined ? '' : fieldMiss(all, 'pool', f.pool),
    f.role === undefined ? '' : fieldMiss(all, 'role', f.role),
    labelMiss(all, f.selector),
  ].filter((r) => r !== '');
  const because = reasons.length > 0 ? `: ${reasons.join('; ')}` : '';
  return `no machine of the ${String(all.length)} matches${because}`;
}
