// SPDX-License-Identifier: Apache-2.0
/**
 * "Machines per release": how many machines boot each release, as a small bar chart (CSS widths,
 * no chart library). The counts are plain values; the chart is built with `dom.ts`.
 */
import type { DashboardMachineView } from '../protocol/operator.ts';
import { el } from './dom.ts';

/** How many machines boot one release (`unknown`: not observed or not answering with one). */
export interface ReleaseCount {
  readonly release: string;
  readonly machines: number;
}

const byVersion = (a: string, b: string): number => a.localeCompare(b, 'en', { numeric: true });

/** Machines per release, newest release first, `unknown` last. */
export function releaseCounts(machines: readonly DashboardMachineView[]): ReleaseCount[] {
  const counts = new Map<string, number>();
  for (const m of machines) {
    const v = m.observed?.version ?? 'unknown';
    counts.set(v, (counts.get(v) ?? 0) + 1);
  }
  const known = [...counts.keys()]
    .filter((v) => v !== 'unknown')
    .sort(byVersion)
    .reverse();
  const order = counts.has('unknown') ? [...known, 'unknown'] : known;
  return order.map((release) => ({ release, machines: counts.get(release) ?? 0 }));
}

/** The chart: a row per release with its bar (share of the largest count) and its count. */
export function releaseChart(machines: readonly DashboardMachineView[]): HTMLElement {
  const counts = releaseCounts(machines);
  if (counts.length === 0) return el('p', { class: 'muted' }, 'No machines yet.');
  const most = Math.max(...counts.map((c) => c.machines));
  return el(
    'div',
    { class: 'release-chart', role: 'list' },
    counts.map((c) => {
      const bar = el('span', { class: 'release-bar' });
      bar.style.width = `${(100 * c.machines) / most}%`;
      return el(
        'div',
        {
          class: 'release-row',
          role: 'listitem',
          'data-release': c.release,
          'data-count': c.machines,
        },
        el('span', { class: 'release-name' }, c.release),
        el('span', { class: 'release-track' }, bar),
        el('span', { class: 'release-count' }, String(c.machines)),
      );
    }),
  );
}
