// SPDX-License-Identifier: Apache-2.0
/**
 * Which machines the page shows and how it groups them, as plain values (no DOM): the
 * choices live in the URL's query (`?pool=workers&zone=b&group=phase`), so a view can be shared and
 * survives a reload; the hash keeps the page (`#/machine/w-1`).
 */
import type { DashboardMachineView } from '../protocol/operator.ts';
import { phaseOf } from './format.ts';

/** What machines can be filtered by. */
export const FilterKeys = ['pool', 'cluster', 'zone', 'phase'] as const;
export type FilterKey = (typeof FilterKeys)[number];

/** What the grid can be grouped by (`none`: one list). */
export const GroupKeys = ['none', 'pool', 'cluster', 'zone', 'phase', 'release'] as const;
export type GroupKey = (typeof GroupKeys)[number];

/** The page's choices: a value per filter (absent: any), and the grouping. */
export interface ViewChoice {
  readonly filters: Readonly<Partial<Record<FilterKey, string>>>;
  readonly group: GroupKey;
}

/** The word shown for a machine without a value (no cluster, no zone label, not observed). */
export const noValue = '(none)';

/** A machine's value for a filter or a grouping. */
export function facetOf(
  m: DashboardMachineView,
  key: FilterKey | Exclude<GroupKey, 'none'>,
): string {
  switch (key) {
    case 'pool':
      return m.pool;
    case 'cluster':
      return m.cluster ?? noValue;
    case 'zone':
      return m.zone ?? noValue;
    case 'phase':
      return phaseOf(m);
    case 'release':
      return m.observed?.version ?? 'unknown';
  }
}

const isGroupKey = (v: string | null): v is GroupKey => GroupKeys.some((k) => k === v);

/** The choices a query string holds; unknown keys and values are ignored. */
export function choiceFromQuery(search: string): ViewChoice {
  const q = new URLSearchParams(search);
  const filters: Partial<Record<FilterKey, string>> = {};
  for (const k of FilterKeys) {
    const v = q.get(k);
    if (v !== null && v !== '') filters[k] = v;
  }
  const group = q.get('group');
  return { filters, group: isGroupKey(group) ? group : 'none' };
}

/** The query string of `c` (`''` when nothing is chosen), keys in a fixed order. */
export function choiceToQuery(c: ViewChoice): string {
  const q = new URLSearchParams();
  for (const k of FilterKeys) {
    const v = c.filters[k];
    if (v !== undefined) q.set(k, v);
  }
  if (c.group !== 'none') q.set('group', c.group);
  const text = q.toString();
  return text === '' ? '' : `?${text}`;
}

/** The machines every chosen filter lets through. */
export function filterMachines(
  machines: readonly DashboardMachineView[],
  c: ViewChoice,
): DashboardMachineView[] {
  return machines.filter((m) =>
    FilterKeys.every((k) => {
      const want = c.filters[k];
      return want === undefined || facetOf(m, k) === want;
    }),
  );
}

/** The distinct values of `key` among the machines, sorted (a filter's options). */
export function facetValues(
  machines: readonly DashboardMachineView[],
  key: FilterKey | Exclude<GroupKey, 'none'>,
): string[] {
  return [...new Set(machines.map((m) => facetOf(m, key)))].sort(byText);
}

const byText = (a: string, b: string): number => a.localeCompare(b, 'en', { numeric: true });

/** One group of the grid: its name (`''` when not grouped) and its machines, in their order. */
export interface MachineGroup {
  readonly name: string;
  readonly machines: readonly DashboardMachineView[];
}

/** The machines in groups by `key`, groups sorted by name; one unnamed group for `none`. */
export function groupMachines(
  machines: readonly DashboardMachineView[],
  key: GroupKey,
): MachineGroup[] {
  if (key === 'none') return [{ name: '', machines }];
  const groups = new Map<string, DashboardMachineView[]>();
  for (const m of machines) {
    const name = facetOf(m, key);
    groups.set(name, [...(groups.get(name) ?? []), m]);
  }
  return [...groups.keys()]
    .sort(byText)
    .map((name) => ({ name, machines: groups.get(name) ?? [] }));
}
