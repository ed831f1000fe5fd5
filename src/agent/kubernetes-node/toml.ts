// SPDX-License-Identifier: Apache-2.0
/**
 * The little TOML containerd's files need, written from a plain object: strings, integers,
 * booleans and arrays of them as `key = value`, nested objects as `[a.'b.c']` tables. molt has no
 * TOML dependency, and the two files it writes (containerd.toml, hosts.toml) are small and fixed
 * in shape, so a writer whose only subtle part is escaping is cheaper than a new package.
 */

export type TomlScalar = string | number | boolean;
export type TomlValue = TomlScalar | readonly TomlScalar[];
export interface TomlTable {
  readonly [key: string]: TomlValue | TomlTable;
}

/** A TOML basic string: `"` and `\` escaped, and every control character as `\uXXXX`. */
export function tomlString(s: string): string {
  let out = '';
  for (const c of s) {
    const code = c.charCodeAt(0);
    if (c === '"' || c === '\\') out += `\\${c}`;
    else if (code < 0x20 || code === 0x7f) out += `\\u${code.toString(16).padStart(4, '0')}`;
    else out += c;
  }
  return `"${out}"`;
}

/** A bare key when TOML allows one, else a quoted one (`"io.containerd.cri.v1.runtime"`). */
function key(k: string): string {
  return /^[A-Za-z0-9_-]+$/.test(k) ? k : tomlString(k);
}

function scalar(v: TomlScalar): string {
  if (typeof v === 'string') return tomlString(v);
  if (typeof v === 'number') {
    if (!Number.isSafeInteger(v))
      throw new Error(`TOML: only integers are written, not ${String(v)}`);
    return String(v);
  }
  return String(v);
}

function value(v: TomlValue): string {
  return Array.isArray(v) ? `[${v.map(scalar).join(', ')}]` : scalar(v as TomlScalar);
}

const isTable = (v: TomlValue | TomlTable): v is TomlTable =>
  typeof v === 'object' && !Array.isArray(v);

function table(path: readonly string[], t: TomlTable, out: string[]): void {
  const entries = Object.entries(t);
  const values = entries.filter(([, v]) => !isTable(v)) as [string, TomlValue][];
  const tables = entries.filter(([, v]) => isTable(v)) as [string, TomlTable][];
  if (path.length > 0 && (values.length > 0 || tables.length === 0)) {
    if (out.length > 0) out.push('');
    out.push(`[${path.map(key).join('.')}]`);
  }
  for (const [k, v] of values) out.push(`${key(k)} = ${value(v)}`);
  for (const [k, sub] of tables) table([...path, k], sub, out);
}

/** `doc` as a TOML document: top-level values first, then each table under its full path. */
export function toToml(doc: TomlTable): string {
  const out: string[] = [];
  table([], doc, out);
  return `${out.join('\n')}\n`;
}
