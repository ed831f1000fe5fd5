// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isMoltError } from '../core/errors.ts';
import { runLab } from './main.ts';

const io = { out: () => undefined, err: () => undefined };

describe('molt lab', () => {
  for (const [name, argv] of [
    ['no verb', []],
    ['unknown verb', ['up']],
    ['no root', ['machine']],
    ['unknown bootloader', ['machine', '--root', '/nonexistent', '--bootloader', 'lilo']],
    ['bad deadline', ['machine', '--root', '/nonexistent', '--health-deadline', '-3']],
    ['unknown flag', ['machine', '--root', '/nonexistent', '--colour']],
  ] as const) {
    it(`refuses ${name} with MOLT_BAD_FLAG before touching anything`, async () => {
      await assert.rejects(runLab(argv, io, []), (e: unknown) => isMoltError(e, 'MOLT_BAD_FLAG'));
    });
  }

  it('prints its usage on --help', async () => {
    let out = '';
    assert.equal(
      await runLab(['machine', '--help'], { out: (t) => (out += t), err: () => undefined }, []),
      0,
    );
    assert.match(out, /--bootloader/);
  });
});
