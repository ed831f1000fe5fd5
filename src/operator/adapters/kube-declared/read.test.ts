// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { declaredHold, declaredPool, needsFinalizer, rolloutRequest } from './read.ts';

describe('reading declared objects', () => {
  it('parses a Pool spec with the fleet file’s schema', () => {
    const p = declaredPool({
      metadata: { name: 'workers', generation: 3 },
      spec: {
        channel: 'stable',
        policies: [{ concurrency: '25%' }, { canary: { count: 1, soak: '5m' } }],
      },
    });
    assert.ok('pool' in p);
    assert.deepEqual(p.pool.policies, [
      { kind: 'concurrency', limit: { percent: 25 } },
      { kind: 'canary', count: 1, soakMs: 300_000 },
    ]);
    assert.equal(p.generation, 3);
    assert.equal(p.deleting, false);
  });

  it('names the field of the first problem, also what only the operator checks', () => {
    const shape = declaredPool({
      metadata: { name: 'w' },
      spec: { policies: [{ concurrency: 'lots' }] },
    });
    assert.ok('invalid' in shape);
    assert.match(shape.invalid, /^spec\.policies\.0\.concurrency: /);
    const cron = declaredPool({
      metadata: { name: 'w' },
      spec: { policies: [{ window: { windows: [{ cron: '61 * * * *', duration: '1h' }] } }] },
    });
    assert.ok('invalid' in cron);
    // The path as the object writes it, `.window` included.
    assert.match(cron.invalid, /^spec\.policies\[0\]\.window\.windows\[0\]\.cron: invalid cron/);
    const zone = declaredPool({
      metadata: { name: 'w' },
      spec: {
        policies: [
          {
            window: { windows: [{ cron: '0 2 * * *', duration: '1h', timeZone: 'Mars/Olympus' }] },
          },
        ],
      },
    });
    assert.ok('invalid' in zone);
    assert.match(
      zone.invalid,
      /^spec\.policies\[0\]\.window\.windows\[0\]\.timeZone: .*Mars\/Olympus/,
    );
  });

  it('sees a deletion and whether the finalizer is still to be put on', () => {
    assert.equal(needsFinalizer({ metadata: { name: 'w' } }), true);
    assert.equal(needsFinalizer({ metadata: { name: 'w', finalizers: ['molt.dev/pool'] } }), false);
    assert.equal(
      needsFinalizer({ metadata: { name: 'w', deletionTimestamp: '2026-11-26T00:00:00Z' } }),
      false,
    );
    const p = declaredPool({ metadata: { name: 'w', deletionTimestamp: new Date() }, spec: {} });
    assert.equal(p.deleting, true);
  });

  it('reads a MachineHold, an end time and a missing reason', () => {
    assert.deepEqual(
      declaredHold({
        metadata: { name: 'h', generation: 1 },
        spec: { machine: 'w-1', reason: 'disk', until: '2026-12-01T00:00:00Z' },
      }),
      { name: 'h', machine: 'w-1', reason: 'disk', generation: 1, until: Date.UTC(2026, 11, 1) },
    );
    const bad = declaredHold({ metadata: { name: 'h' }, spec: { machine: 'w-1' } });
    assert.ok('invalid' in bad);
    assert.match(bad.invalid, /^spec\.reason: /);
  });

  it('reads a Rollout’s action fields and who last set them', () => {
    assert.equal(rolloutRequest({ metadata: { name: 'r' }, spec: { pool: 'w' } }), undefined);
    const q = rolloutRequest({
      metadata: {
        name: 'r',
        managedFields: [
          {
            manager: 'molt-operator',
            time: '2026-11-26T10:00:00Z',
            fieldsV1: { 'f:spec': { 'f:pool': {} } },
          },
          {
            manager: 'kubectl-edit',
            time: '2026-11-26T10:01:00Z',
            fieldsV1: { 'f:spec': { 'f:approved': {} } },
          },
          {
            manager: 'kubectl-patch',
            time: '2026-11-26T10:02:00Z',
            fieldsV1: { 'f:spec': { 'f:paused': {} } },
          },
        ],
      },
      spec: { pool: 'w', paused: true, approved: true },
    });
    assert.deepEqual(q, {
      rollout: 'r',
      by: 'kubernetes:kubectl-patch',
      paused: true,
      approved: true,
    });
  });
});
