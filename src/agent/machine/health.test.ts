// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isMoltError } from '../../core/errors.ts';
import { createFakeClock } from '../ports/clock.fake.ts';
import type { HealthCheck } from '../ports/health-check.ts';
import { waitHealthy } from './health.ts';

const check = (name: string, run: HealthCheck['run']): HealthCheck => ({ name, run });

describe('waitHealthy', () => {
  it('returns once every check passes or is skipped', async () => {
    const clock = createFakeClock();
    let calls = 0;
    const flaky = check('flaky', () =>
      Promise.resolve({ name: 'flaky', status: (calls += 1) < 3 ? 'failing' : 'ok', message: '' }),
    );
    const skipped = check('kube', () =>
      Promise.resolve({ name: 'kube', status: 'skipped', message: 'not in a cluster' }),
    );
    const done = waitHealthy([flaky, skipped], clock, clock.now() + 10_000, () => undefined);
    for (let i = 0; i < 5 && calls < 3; i += 1) {
      await new Promise((r) => setImmediate(r));
      clock.advance(1000);
    }
    assert.equal((await done).length, 2);
    assert.equal(calls, 3);
  });

  it('gives up at the deadline with the failing checks named', async () => {
    const clock = createFakeClock();
    const never = check('never', () =>
      Promise.resolve({ name: 'never', status: 'failing', message: 'built broken' }),
    );
    const done = waitHealthy([never], clock, clock.now() + 3000, () => undefined);
    const outcome = done.then(
      () => undefined,
      (e: unknown) => e,
    );
    for (let i = 0; i < 10; i += 1) {
      await new Promise((r) => setImmediate(r));
      clock.advance(1000);
    }
    const error = await outcome;
    assert.ok(
      isMoltError(error, 'MOLT_HEALTH_DEADLINE') && /never \(built broken\)/.test(error.message),
      String(error),
    );
  });

  it('aborts a check that hangs past the deadline instead of waiting for it', async () => {
    const clock = createFakeClock();
    let aborted = false;
    const hangs = check('hangs', (signal) => {
      signal.addEventListener('abort', () => (aborted = true));
      return new Promise(() => undefined);
    });
    const done = waitHealthy([hangs], clock, clock.now() + 2000, () => undefined);
    await new Promise((r) => setImmediate(r));
    clock.advance(2500);
    await assert.rejects(done, (e: unknown) => isMoltError(e, 'MOLT_HEALTH_DEADLINE'));
    assert.ok(aborted, 'the hanging check was told to stop');
  });
});
