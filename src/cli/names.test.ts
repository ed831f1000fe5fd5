// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isMoltError } from '../protocol/index.ts';
import { editDistance, nearMatches } from '../core/near-matches.ts';
import { requireMachine, resolvePrefix } from './names.ts';

describe('names a person types', () => {
  it('measures edits', () => {
    assert.equal(editDistance('cp-1', 'cp-1'), 0);
    assert.equal(editDistance('cp1', 'cp-1'), 1);
    assert.equal(editDistance('wrk-1', 'w-1'), 2);
    assert.equal(editDistance('', 'abc'), 3);
  });

  it('suggests near names, closest first, and contained ones', () => {
    const names = ['cp-1', 'cp-2', 'w-1', 'w-10', 'edge-7'];
    assert.deepEqual(nearMatches('cp1', names), ['cp-1']);
    assert.deepEqual(nearMatches('w-1', names), ['w-1', 'w-10']);
    assert.deepEqual(nearMatches('edge', names), ['edge-7']);
    assert.deepEqual(nearMatches('zzz', names), []);
  });

  it('takes a machine by its exact name only, suggesting near ones', () => {
    assert.equal(requireMachine('w-1', ['w-1', 'w-10'], 'the operator'), 'w-1');
    assert.throws(
      () => requireMachine('w1', ['w-1', 'cp-1'], 'the operator at https://o:1'),
      (e: unknown) =>
        isMoltError(e, 'MOLT_UNKNOWN_MACHINE') &&
        e.message === 'the operator at https://o:1 manages no machine w1; did you mean w-1?',
    );
  });

  it('resolves a rollout by id or unique prefix; the exact id wins over longer ones', () => {
    const ids = ['workers-1.1.0', 'workers-1.1.0-rollback', 'cp-1.0.9', 'cp-1.1.0'];
    assert.equal(resolvePrefix('workers-1.1.0', ids), 'workers-1.1.0');
    assert.equal(resolvePrefix('workers-1.1.0-r', ids), 'workers-1.1.0-rollback');
    assert.equal(resolvePrefix('cp-1.0', ids), 'cp-1.0.9');
    assert.throws(
      () => resolvePrefix('cp-', ids),
      (e: unknown) =>
        isMoltError(e, 'MOLT_AMBIGUOUS_ID') &&
        e.message.endsWith('start with it: cp-1.0.9, cp-1.1.0'),
    );
    assert.throws(
      () => resolvePrefix('prod', ids),
      (e: unknown) => isMoltError(e, 'MOLT_ROLLOUT_NOT_FOUND') && !e.message.includes('did you'),
    );
  });
});
