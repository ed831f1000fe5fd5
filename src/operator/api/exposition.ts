// SPDX-License-Identifier: Apache-2.0
/** Lines of the Prometheus text exposition format 0.0.4, for the operator's `GET /metrics`. */

const escape = (v: string): string =>
  v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');

/** One sample line: `name{label="value",…} value`. */
export const sample = (name: string, labels: Record<string, string>, value: number): string => {
  const l = Object.entries(labels).map(([k, v]) => `${k}="${escape(v)}"`);
  return `${name}${l.length === 0 ? '' : `{${l.join(',')}}`} ${String(value)}`;
};

/** A family: its `# HELP` and `# TYPE` lines, then its samples. */
export function family(
  name: string,
  type: 'gauge' | 'counter' | 'histogram',
  help: string,
  lines: string[],
): string[] {
  return [`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`, ...lines];
}
