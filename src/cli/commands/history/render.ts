// SPDX-License-Identifier: Apache-2.0
/** How `molt history` prints events: a table, or (following) one padded line per event. */
import { historyKindLabel } from '../../../core/images/workload.ts';
import { shownAt, type HistoryEventView, type PrintColumn } from '../../../protocol/index.ts';

/** Who did it: the person or service whose certificate asked, else the operator itself. */
export const byOf = (e: HistoryEventView): string => {
  const by = e.data?.['by'];
  return typeof by === 'string' ? by : 'operator';
};

/** `2026-11-24T10:00:03.120Z` → `2026-11-24T10:00:03Z`: a followed line's time (it is now). */
const second = (iso: string): string => iso.replace(/\.\d+Z$/, 'Z');

/** Columns of `molt history` (the table; a followed line has only the time, see {@link historyRow}). */
export const historyColumns: readonly PrintColumn<HistoryEventView>[] = [
  { header: 'TIME', value: (e, now) => shownAt(e.at, now) },
  { header: 'KIND', value: (e) => historyKindLabel(e.kind, e.machine) },
  { header: 'ROLLOUT', value: (e) => e.rollout ?? '-' },
  { header: 'MACHINE', value: (e) => e.machine ?? '-' },
  { header: 'BY', value: byOf },
  { header: 'MESSAGE', value: (e) => e.message },
];

/** Column widths of followed lines (a table cannot be aligned before its rows are known). */
const widths = [20, 16, 28, 12, 12];

/**
 * One followed line (the header for undefined), the columns padded to fixed widths. Its time has
 * no "ago": a followed event happened just now.
 */
export function historyRow(e: HistoryEventView | undefined): string {
  const [, ...rest] = historyColumns;
  const cells =
    e === undefined
      ? historyColumns.map((c) => c.header)
      : [second(e.at), ...rest.map((c) => c.value(e, Date.now()))];
  return `${cells
    .map((v, i) => (i < widths.length ? v.padEnd(widths[i] ?? 0) : v))
    .join(' ')
    .trimEnd()}\n`;
}
