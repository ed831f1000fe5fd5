// SPDX-License-Identifier: Apache-2.0
/**
 * The fleet's filter and grouping controls: a select per filter (pool, cluster, zone, phase) with
 * the values the fleet has, and the grouping. A change goes into the URL's query (`filters.ts`)
 * and redraws; the controls are rebuilt only when the values on offer change, so an open select is
 * not pulled from under the pointer.
 */
import type { DashboardMachineView } from '../protocol/operator.ts';
import { el } from './dom.ts';
import {
  FilterKeys,
  GroupKeys,
  choiceToQuery,
  facetValues,
  type FilterKey,
  type GroupKey,
  type ViewChoice,
} from './filters.ts';

let built: { key: string; node: HTMLElement } | undefined;

function select(
  name: string,
  options: readonly string[],
  chosen: string,
  onChange: (v: string) => void,
) {
  const s = el(
    'select',
    { name, 'aria-label': name, 'data-filter': name },
    options.map((o) => el('option', { value: o }, o === '' ? `any ${name}` : o)),
  );
  s.value = chosen;
  s.addEventListener('change', () => {
    onChange(s.value);
  });
  return s;
}

/** Put `c` into the URL (keeping the hash) and tell the page. */
function choose(c: ViewChoice, onChange: () => void): void {
  history.replaceState(null, '', `${location.pathname}${choiceToQuery(c)}${location.hash}`);
  onChange();
}

/** The controls for `machines` under the choice `c`. */
export function filterBar(
  machines: readonly DashboardMachineView[],
  c: ViewChoice,
  onChange: () => void,
): HTMLElement {
  const values = Object.fromEntries(FilterKeys.map((k) => [k, facetValues(machines, k)])) as Record<
    FilterKey,
    string[]
  >;
  const key = JSON.stringify([values, c]);
  if (built?.key === key) return built.node;
  const filters = FilterKeys.map((k) =>
    select(k, ['', ...values[k]], c.filters[k] ?? '', (v) => {
      const next: Partial<Record<FilterKey, string>> = {};
      for (const key of FilterKeys) {
        const value = key === k ? v : (c.filters[key] ?? '');
        if (value !== '') next[key] = value;
      }
      choose({ ...c, filters: next }, onChange);
    }),
  );
  const group = select('group', GroupKeys, c.group, (v) => {
    choose({ ...c, group: v as GroupKey }, onChange);
  });
  const clear = el('button', { type: 'button', class: 'link' }, 'clear');
  clear.addEventListener('click', () => {
    choose({ filters: {}, group: 'none' }, onChange);
  });
  const node = el(
    'div',
    { class: 'filters' },
    ...filters,
    el('label', {}, 'group by ', group),
    clear,
  );
  built = { key, node };
  return node;
}
