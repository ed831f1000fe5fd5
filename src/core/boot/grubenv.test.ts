// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { ErrorCode, isMoltError } from '../errors.ts';
import {
  createGrubenv,
  encodeGrubenv,
  grubenvEntries,
  grubenvGet,
  grubenvSet,
  grubenvUnset,
  parseGrubenv,
  type Grubenv,
} from './grubenv.ts';

const golden = (name: string): Uint8Array =>
  new Uint8Array(readFileSync(new URL(`testdata/${name}.grubenv`, import.meta.url)));
const bytes = (env: Grubenv): Buffer => Buffer.from(encodeGrubenv(env));

describe('grubenv against grub-editenv golden files', () => {
  it('creates the same 1024 bytes as `grub-editenv create` (with the Debian WARNING line)', () => {
    assert.deepEqual(bytes(createGrubenv()), Buffer.from(golden('create')));
  });

  it('replays set, escaping, in-place rewrite and unset byte for byte', () => {
    let env = grubenvSet(
      grubenvSet(createGrubenv(), 'saved_entry', 'molt-a'),
      'next_entry',
      'molt-b',
    );
    assert.deepEqual(bytes(env), Buffer.from(golden('set')));
    env = grubenvSet(grubenvSet(env, 'weird', 'a\\b\nc'), 'eq', 'x=y');
    assert.deepEqual(bytes(env), Buffer.from(golden('escaped')));
    env = grubenvSet(grubenvSet(env, 'next_entry', ''), 'saved_entry', 'molt-b-longer-name');
    env = grubenvUnset(env, 'weird');
    assert.deepEqual(bytes(env), Buffer.from(golden('edited')));
  });

  it('reads the golden blocks with unescaped values', () => {
    const env = parseGrubenv(golden('escaped'));
    assert.deepEqual(grubenvEntries(env), [
      ['saved_entry', 'molt-a'],
      ['next_entry', 'molt-b'],
      ['weird', 'a\\b\nc'],
      ['eq', 'x=y'],
    ]);
    assert.equal(grubenvGet(parseGrubenv(golden('edited')), 'next_entry'), '');
    assert.equal(grubenvGet(parseGrubenv(golden('edited')), 'weird'), undefined);
  });
});

describe('grubenv validation and limits', () => {
  const code = (e: unknown): string | undefined => (isMoltError(e) ? e.code : undefined);

  it('refuses a block without the signature or of another size', () => {
    assert.throws(
      () => parseGrubenv(new Uint8Array(1024)),
      (e) => code(e) === ErrorCode.BootloaderInvalid,
    );
    const short = golden('create').subarray(0, 512);
    assert.throws(
      () => parseGrubenv(short),
      (e) => code(e) === ErrorCode.BootloaderInvalid,
    );
    assert.equal(parseGrubenv(short, { anySize: true }).block.length, 512);
  });

  it('says "environment block too small" when a value does not fit, leaving the block as it was', () => {
    const env = grubenvSet(createGrubenv(), 'a', '1');
    assert.throws(() => grubenvSet(env, 'big', 'x'.repeat(1024)), /environment block too small/);
    const free = 1024 - env.block.search(/#+$/);
    const full = grubenvSet(env, 'fill', 'y'.repeat(free - 'fill=\n'.length));
    assert.equal(full.block.length, 1024);
    assert.ok(!full.block.endsWith('#'));
    assert.throws(() => grubenvSet(full, 'a', '12'), /too small/);
    assert.equal(grubenvGet(grubenvSet(full, 'a', ''), 'a'), '');
  });

  it('keeps foreign bytes and unknown variables exactly', () => {
    const env = grubenvSet(createGrubenv(), 'blob', '\u00ff\u0080\u00e9');
    const back = parseGrubenv(encodeGrubenv(grubenvSet(env, 'saved_entry', 'molt-a')));
    assert.equal(grubenvGet(back, 'blob'), '\u00ff\u0080\u00e9');
    assert.throws(
      () => grubenvSet(env, 'x', 'é€'),
      (e) => code(e) === ErrorCode.BadInput,
    );
    assert.throws(
      () => grubenvSet(env, 'a=b', '1'),
      (e) => code(e) === ErrorCode.BadInput,
    );
  });

  it('load_env semantics: the last duplicate wins, set edits the first', () => {
    const dup = createGrubenv().block.replace('#'.repeat(20), 'k=1\nk=2\n'.padEnd(20, '#'));
    const env = parseGrubenv(encodeGrubenv({ block: dup }));
    assert.equal(grubenvGet(env, 'k'), '2');
    assert.deepEqual(grubenvEntries(grubenvSet(env, 'k', '3')), [
      ['k', '3'],
      ['k', '2'],
    ]);
  });
});

describe('grubenv properties', () => {
  const name = fc.constantFrom('saved_entry', 'next_entry', 'prev_saved_entry', 'x', 'molt_y');
  const value = fc.string({
    unit: fc.constantFrom('a', 'b', '\\', '\n', '=', '#', ' '),
    maxLength: 12,
  });
  const op = fc.oneof(
    fc.tuple(fc.constant('set' as const), name, value),
    fc.tuple(fc.constant('unset' as const), name, fc.constant('')),
  );

  it('behaves like a map with insertion order, always 1024 bytes', () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 30 }), (ops) => {
        let env = createGrubenv();
        const model = new Map<string, string>();
        for (const [kind, n, v] of ops) {
          if (kind === 'set') {
            env = grubenvSet(env, n, v);
            model.set(n, v);
          } else {
            env = grubenvUnset(env, n);
            model.delete(n);
          }
          assert.equal(env.block.length, 1024);
        }
        assert.deepEqual(grubenvEntries(parseGrubenv(encodeGrubenv(env))), [...model.entries()]);
      }),
    );
  });
});
