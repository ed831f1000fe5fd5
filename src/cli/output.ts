// SPDX-License-Identifier: Apache-2.0
import { stringify } from 'yaml';
import type { PrintColumn } from '../protocol/index.ts';
import type { OutputFormat } from './command-options.ts';

export { outputFormats, type OutputFormat } from './command-options.ts';

/** Render rows as an aligned plain-text table with the given columns, times relative to `now`. */
export function renderTable<T>(
  columns: readonly PrintColumn<T>[],
  rows: readonly T[],
  now = Date.now(),
): string {
  const cells = rows.map((row) => columns.map((c) => c.value(row, now)));
  const widths = columns.map((c, i) =>
    Math.max(c.header.length, ...cells.map((r) => (r[i] ?? '').length)),
  );
  const line = (values: readonly string[]): string =>
    values
      .map((v, i) => (i === values.length - 1 ? v : v.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return [line(columns.map((c) => c.header)), ...cells.map(line)].join('\n') + '\n';
}

/** Render a value for machines: pretty JSON or YAML, always ending with a newline. */
export function renderData(format: Exclude<OutputFormat, 'table'>, value: unknown): string {
  return format === 'json' ? JSON.stringify(value, null, 2) + '\n' : stringify(value);
}

/**
 * A list for machines: pretty JSON or YAML; while watching (a new list per change), one JSON
 * line or one YAML document (`---`) per list, so a reader can split the stream.
 */
export function renderListData(
  format: Exclude<OutputFormat, 'table'>,
  value: unknown,
  watching: boolean,
): string {
  if (!watching) return renderData(format, value);
  return format === 'json' ? `${JSON.stringify(value)}\n` : `---\n${stringify(value)}`;
}
