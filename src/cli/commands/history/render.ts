// SPDX-License-Identifier: Apache-2.0
/** How `molt history` prints events: a table, or (following) one padded line per event. */
import type { HistoryEventView, PrintColumn } from '../../../protocol/index.ts';

/** Who did it: the person or service whose certificate asked, else the operator itself. */
export const byOf = (e: HistoryEventView): string => {
  const by = e.data?.['by'];
  return typeof by === 'string' ? by : 'operator';
};

/** `2026-11-24T10:00:03.120Z` → `2026-11-24 10:00:03`. */
const second = (iso: string): string => iso.slice(0, 19).replace('T', ' ');

/** Columns of `molt history`. */
export const historyColumns: readonly PrintColumn<HistoryEventView>[] = [
  { header: 'TIME (UTC)', value: (e) => second(e.at) },
  { header: 'KIND', value: (e) => e.kind },
  { header: 'ROLLOUT', value: (e) => e.rollout ?? '-' },
  { header: 'MACHINE', value: (e) => e.machine ?? '-' },
  { header: 'BY', value: byOf },
  { header: 'MESSAGE', value: (e) => e.message },
];

/** Column widths of followed lines (a table cannot be aligned before its rows are known). */
const widths = [19, 16, 28, 12, 12];

/** One followed line (the header for undefined), the columns padded to fixed widths. */
export function historyRow(e: HistoryEventView | undefined): string {
  const cells =
    e === undefined ? historyColumns.map((c) => c.header) : historyColumns.map((c) => c.value(e));
  return `${cells
    .map((v, i) => (i < widths.length ? v.padEnd(widths[i] ?? 0) : v))
    .join(' ')
    .trimEnd()}\n`;
}
