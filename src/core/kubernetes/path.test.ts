// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { checkPath, clusterFrom } from './path.ts';
import { machine, three } from './fixtures.test.ts';
import { emulationAllowed } from './version.ts';

describe('the Kubernetes upgrade path', () => {
  it('allows a patch up and a patch down, keeping the emulation', () => {
    assert.deepEqual(checkPath(three('v1.36.3'), 'v1.36.4'), {
      ok: true,
      move: 'patch-upgrade',
      from: { version: 'v1.36.3' },
    });
    const down = checkPath(three('v1.36.3', { emulated: '1.35' }), 'v1.36.1');
    assert.deepEqual(down, {
      ok: true,
      move: 'patch-downgrade',
      from: { version: 'v1.36.3', emulatedVersion: '1.35' },
      emulatedVersion: '1.35',
    });
  });

  it('runs a minor upgrade emulating the old minor', () => {
    const v = checkPath(three('v1.35.4'), 'v1.36.3');
    assert.equal(v.ok && v.move, 'minor-upgrade');
    assert.equal(v.ok && v.emulatedVersion, '1.35');
  });

  it('refuses a skipped minor with MOLT_KUBE_VERSION_SKEW', () => {
    const v = checkPath(three('v1.34.2'), 'v1.36.3');
    assert.ok(!v.ok);
    assert.equal(v.code, 'MOLT_KUBE_VERSION_SKEW');
    assert.match(v.reason, /skips a minor/);
  });

  it('allows a minor rollback only while the new binaries emulate the old minor', () => {
    const open = checkPath(three('v1.36.3', { emulated: '1.35' }), 'v1.35.4');
    assert.deepEqual(open, {
      ok: true,
      move: 'minor-rollback',
      from: { version: 'v1.36.3', emulatedVersion: '1.35' },
    });
    const finalized = checkPath(three('v1.36.3'), 'v1.35.4');
    assert.equal(!finalized.ok && finalized.code, 'MOLT_KUBE_DOWNGRADE_WINDOW');
    assert.match(!finalized.ok ? finalized.reason : '', /finalized/);
  });

  it('refuses a downgrade of two minors as skew, even inside an emulation', () => {
    const v = checkPath(three('v1.36.3', { emulated: '1.34' }), 'v1.34.9');
    assert.equal(!v.ok && v.code, 'MOLT_KUBE_VERSION_SKEW');
  });

  it('refuses the next minor while the last one is not finalized', () => {
    const v = checkPath(three('v1.36.3', { emulated: '1.35' }), 'v1.37.0');
    assert.equal(!v.ok && v.code, 'MOLT_KUBE_VERSION_SKEW');
    assert.equal(!v.ok && v.hint, 'molt cluster kubernetes finalize');
  });

  it('judges every component of a half-upgraded cluster', () => {
    const half = [machine('cp-1', 'v1.36.3', { emulated: '1.35' }), machine('cp-2', 'v1.35.4')];
    assert.deepEqual(clusterFrom(half), { version: 'v1.35.4', emulatedVersion: '1.35' });
    const forward = checkPath(half, 'v1.36.3');
    assert.equal(forward.ok && forward.move, 'minor-upgrade');
    const back = checkPath(half, 'v1.35.4');
    assert.equal(back.ok && back.move, 'minor-rollback');
  });

  it('refuses when no machine reports a version, and garbage targets', () => {
    assert.equal(checkPath([], 'v1.36.3').ok, false);
    assert.throws(() => checkPath(three('v1.36.3'), '1.36'), { code: 'MOLT_INVALID_VERSION' });
  });

  it('knows the emulation window the binaries accept (kube=1.33..1.36 for 1.36)', () => {
    assert.ok(emulationAllowed('v1.36.3', '1.33'));
    assert.ok(emulationAllowed('v1.36.3', '1.36'));
    assert.ok(!emulationAllowed('v1.36.3', '1.32'));
    assert.ok(!emulationAllowed('v1.36.3', '1.37'));
  });

  it('never allows a move of more than one minor, and always a patch (property)', () => {
    fc.assert(
      fc.property(
        fc.record({
          m: fc.integer({ min: 20, max: 40 }),
          p: fc.integer({ min: 0, max: 9 }),
          tm: fc.integer({ min: 15, max: 45 }),
          tp: fc.integer({ min: 0, max: 9 }),
          back: fc.option(fc.integer({ min: 0, max: 3 }), { nil: undefined }),
        }),
        ({ m, p, tm, tp, back }) => {
          const emulated = back === undefined ? undefined : `1.${String(m - back)}`;
          const running = three(
            `v1.${String(m)}.${String(p)}`,
            emulated === undefined ? {} : { emulated },
          );
          const v = checkPath(running, `v1.${String(tm)}.${String(tp)}`);
          if (Math.abs(tm - m) > 1) return !v.ok;
          if (tm === m) return v.ok;
          if (tm === m - 1) return v.ok === (emulated === `1.${String(tm)}`);
          return v.ok === (back === undefined || back === 0);
        },
      ),
    );
  });
});
