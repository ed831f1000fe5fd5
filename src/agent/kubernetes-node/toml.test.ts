// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { describe, it } from 'node:test';
import { promisify } from 'node:util';
import { toToml, tomlString, type TomlTable } from './toml.ts';

const run = promisify(execFile);

/** Parse `text` with Python's tomllib (3.11+), a TOML 1.0 parser molt does not ship. */
async function parseWithPython(text: string): Promise<unknown> {
  const script = 'import json,sys,tomllib; print(json.dumps(tomllib.loads(sys.stdin.read())))';
  const child = run('python3', ['-c', script]);
  child.child.stdin?.end(text);
  return JSON.parse((await child).stdout) as unknown;
}

const pythonToml = await run('python3', ['-c', 'import tomllib']).then(
  () => true,
  () => false,
);

describe('toToml', () => {
  it('writes values before tables, quotes dotted keys, and nests tables under full paths', () => {
    const text = toToml({
      version: 3,
      root: '/r',
      plugins: { 'io.containerd.cri.v1.images': { pinned_images: { sandbox: 'p:1' } } },
      empty: {},
    });
    assert.equal(
      text,
      [
        'version = 3',
        'root = "/r"',
        '',
        '[plugins."io.containerd.cri.v1.images".pinned_images]',
        'sandbox = "p:1"',
        '',
        '[empty]',
        '',
      ].join('\n'),
    );
  });

  it('escapes quotes, backslashes and control characters', () => {
    assert.equal(tomlString('a"b\\c\nd\u0000\u007f'), '"a\\"b\\\\c\\u000ad\\u0000\\u007f"');
    assert.throws(() => toToml({ x: 1.5 }), /only integers/);
  });

  it(
    'reads back as the same data with a real TOML parser',
    { skip: !pythonToml && 'no python3 tomllib' },
    async () => {
      const doc: TomlTable = {
        version: 3,
        odd: 'quote " back \\ tab \t newline \n bell \u0007 ünï',
        list: ['pull', 'resolve'],
        flag: true,
        plugins: {
          'io.containerd.cri.v1.runtime': {
            cni: { bin_dir: '/opt/cni/bin' },
            containerd: { runtimes: { runc: { options: { SystemdCgroup: true } } } },
          },
          'with space': { 'key.with.dots': 'v' },
        },
      };
      assert.deepEqual(await parseWithPython(toToml(doc)), doc);
    },
  );
});
