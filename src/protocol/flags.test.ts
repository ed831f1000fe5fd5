// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { parseArgs } from 'node:util';
import { describe, it } from 'node:test';
import { commanderFlags, HelpFlag, optionLines, parseOptions, type FlagTable } from './flags.ts';

const table = {
  dir: { type: 'string', value: 'DIR', help: 'the directory' },
  workers: { type: 'string', value: 'N', default: '3', help: 'how many' },
  overlay: { type: 'string', value: 'DIR', multiple: true, help: 'repeatable' },
  fast: { type: 'boolean', help: 'short timeouts' },
  output: {
    type: 'string',
    short: 'o',
    value: 'FORMAT',
    default: 'text',
    choices: ['text', 'json'],
    help: 'text or json',
  },
  'kubernetes-control-plane': {
    type: 'string',
    value: 'DIR',
    help: 'a long flag whose text goes on the next line, and wraps when it is longer than the width of the column',
  },
  help: HelpFlag,
} as const satisfies FlagTable;

describe('a process verb’s flags declared once', () => {
  it('parses with the table: defaults for strings that have one, false for booleans, [] for repeatable', () => {
    const none = parseArgs({ args: [], options: parseOptions(table), strict: true }).values;
    assert.deepEqual(
      { ...none },
      { workers: '3', overlay: [], fast: false, output: 'text', help: false },
    );
    const some = parseArgs({
      args: ['--dir', 'd', '-o', 'json', '--overlay', 'a', '--overlay', 'b', '--fast'],
      options: parseOptions(table),
      strict: true,
    }).values;
    assert.deepEqual(
      [some.dir, some.output, some.overlay, some.fast],
      ['d', 'json', ['a', 'b'], true],
    );
  });

  it('writes the usage’s option lines in one column, a long flag’s text on the next line, wrapped', () => {
    const lines = optionLines(table, { column: 25, width: 80 }).split('\n');
    assert.equal(lines[0], '  --dir DIR              the directory');
    assert.equal(lines[4], '  -o, --output FORMAT    text or json');
    assert.equal(lines[5], '  --kubernetes-control-plane DIR');
    assert.ok(lines[6]?.startsWith(' '.repeat(25) + 'a long flag'));
    assert.ok(
      lines.every((l) => l.length <= 80),
      lines.join('\n'),
    );
    assert.equal(lines.at(-1), '  -h, --help             print this usage');
  });

  it('lists each flag as commander declares one, with its choices, and leaves --help to commander', () => {
    const flags = commanderFlags(table);
    assert.deepEqual(flags[0], ['--dir <dir>', 'the directory']);
    assert.deepEqual(flags[4], ['-o, --output <format>', 'text or json', ['text', 'json']]);
    assert.equal(flags.length, Object.keys(table).length - 1);
    assert.ok(!flags.some(([f]) => f.includes('--help')));
  });
});
