// SPDX-License-Identifier: Apache-2.0
/**
 * A process verb's flags declared once (`molt agent`, `molt operator`, `molt lab …`, `molt image
 * build`, `molt install`): one table per verb, from which the process's parser (node:util
 * `parseArgs`), the "Options:" block of its usage, and the CLI's listing of it (`molt --help`,
 * `molt completion`) all derive. A flag can then be neither parsed but undocumented nor listed but
 * refused. Each process's own table lives beside its usage; the CLI imports them all, so they
 * import nothing.
 */

export interface FlagSpec {
  readonly type: 'string' | 'boolean';
  readonly short?: string;
  /** Given more than once: every value, in order. */
  readonly multiple?: boolean;
  /** A string flag's default (a boolean's is false). */
  readonly default?: string;
  /** A string flag's value in the usage: `DIR` in `--root DIR`. */
  readonly value?: string;
  /** What it does, one sentence, for the usage and the CLI's listing. */
  readonly help: string;
  /** The values it takes, for completion. */
  readonly choices?: readonly string[];
}

export type FlagTable = Readonly<Record<string, FlagSpec>>;

/** What `parseArgs` needs of one flag: a boolean defaults to false, so its value is never undefined. */
type ParseOption<F extends FlagSpec> = F['type'] extends 'boolean'
  ? { type: 'boolean'; default: boolean; short?: string }
  : F extends { readonly multiple: true }
    ? { type: 'string'; multiple: true; default: string[]; short?: string }
    : F extends { readonly default: string }
      ? { type: 'string'; default: string; short?: string }
      : { type: 'string'; short?: string };

export type ParseOptions<T extends FlagTable> = { -readonly [K in keyof T]: ParseOption<T[K]> };

/** The table as `parseArgs`'s `options`. */
export function parseOptions<T extends FlagTable>(table: T): ParseOptions<T> {
  const options: Record<string, Record<string, unknown>> = {};
  for (const [name, f] of Object.entries(table)) {
    options[name] = {
      type: f.type,
      ...(f.short !== undefined && { short: f.short }),
      ...(f.multiple === true && { multiple: true, default: [] }),
      ...(f.type === 'boolean' && { default: false }),
      ...(f.type === 'string' && f.default !== undefined && { default: f.default }),
    };
  }
  return options as ParseOptions<T>;
}

/** `-o, --output FORMAT` as the usage writes it. */
function usageName(name: string, f: FlagSpec): string {
  const short = f.short === undefined ? '' : `-${f.short}, `;
  return `${short}--${name}${f.type === 'string' ? ` ${f.value ?? 'VALUE'}` : ''}`;
}

/** `text` broken into lines of at most `width` characters, at spaces. */
export function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line !== '' && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line === '' ? word : `${line} ${word}`;
  }
  if (line !== '') lines.push(line);
  return lines;
}

/**
 * The usage's "Options:" lines: each flag and its value, then what it does, in one column;
 * a flag too long for the first column puts its text on the next line.
 */
export function optionLines(table: FlagTable, o: { column?: number; width?: number } = {}): string {
  const column = o.column ?? 25;
  const width = o.width ?? 100;
  const pad = ' '.repeat(column);
  return Object.entries(table)
    .map(([name, f]) => {
      const head = `  ${usageName(name, f)}`;
      const text = wrap(f.help, width - column);
      const first = head.length < column - 1 ? `${head.padEnd(column)}${text.shift() ?? ''}` : head;
      return [first, ...text.map((l) => `${pad}${l}`)].join('\n');
    })
    .join('\n');
}

/**
 * Each flag as commander declares one: `['-o, --output <format>', help, choices]`; not `--help`,
 * which commander gives every command.
 */
export function commanderFlags(
  table: FlagTable,
): [flags: string, description: string, choices?: readonly string[]][] {
  return Object.entries(table)
    .filter(([name]) => name !== 'help')
    .map(([name, f]) => {
      const short = f.short === undefined ? '' : `-${f.short}, `;
      const value = f.type === 'string' ? ` <${(f.value ?? 'value').toLowerCase()}>` : '';
      const flags = `${short}--${name}${value}`;
      return f.choices === undefined ? [flags, f.help] : [flags, f.help, f.choices];
    });
}

/** `-h, --help`, which every process verb takes. */
export const HelpFlag = {
  type: 'boolean',
  short: 'h',
  help: 'print this usage',
} as const satisfies FlagSpec;

/**
 * The first flag among parseArgs's `tokens` that `own` does not declare (as it was typed), for a
 * process that parses every verb's flags at once and then holds each verb to its own.
 */
export function foreignFlag(
  tokens: readonly { readonly kind: string; readonly name?: string; readonly rawName?: string }[],
  own: FlagTable,
): string | undefined {
  const t = tokens.find((x) => x.kind === 'option' && !Object.hasOwn(own, x.name ?? ''));
  return t?.rawName;
}
