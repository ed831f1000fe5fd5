// SPDX-License-Identifier: Apache-2.0
// The GM HEAD checks (docs/adr/0013 decision 5): a digest the registry has is present, one it
// answers 404 for is missing, and one it cannot answer for — an error, or no answer in time — is
// unknown, never missing; at most `concurrency` HEADs are in flight.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ErrorCode, MoltError } from '../../core/errors.ts';
import { policy } from '../../core/images/fixtures.test.ts';
import { checkGm, createGmWatch, type GmExists } from './gm-check.ts';

const d = (n: number): string => `sha256:${n.toString(16).padStart(64, '0')}`;
const pins = (...digests: string[]) =>
  digests.map((digest) => ({ digest, reason: `GM ${digest.slice(-2)}` }));

describe('the GM check', () => {
  it('says present for a digest the registry has and missing for one it answers 404 for', async () => {
    const web = policy({ name: 'web', repository: 'r.example/acme/web', gm: pins(d(1), d(2)) });
    const dns = policy({ name: 'dns', repository: 'r.example/acme/dns', gm: pins(d(3)) });
    const asked: string[] = [];
    const exists: GmExists = (repository, digest) => {
      asked.push(`${repository}@${digest}`);
      return Promise.resolve(digest !== d(2));
    };
    const found = await checkGm([web, dns, policy({ name: 'none' })], exists);
    assert.deepEqual(
      found.map((f) => [f.policy, f.repository, f.digest, f.reason, f.state]),
      [
        ['web', 'r.example/acme/web', d(1), 'GM 01', 'present'],
        ['web', 'r.example/acme/web', d(2), 'GM 02', 'missing'],
        ['dns', 'r.example/acme/dns', d(3), 'GM 03', 'present'],
      ],
    );
    assert.equal(asked.length, 3);
  });

  it('says unknown, with the error, when the registry fails — never missing', async () => {
    const exists: GmExists = (_, digest) =>
      digest === d(1)
        ? Promise.reject(new MoltError(ErrorCode.RegistryUnreachable, 'registry r.example: 503'))
        : Promise.reject(new Error('socket hang up'));
    const found = await checkGm([policy({ gm: pins(d(1), d(2)) })], exists);
    assert.deepEqual(
      found.map((f) => [f.state, f.message]),
      [
        ['unknown', `${ErrorCode.RegistryUnreachable}: registry r.example: 503`],
        ['unknown', 'socket hang up'],
      ],
    );
  });

  it('says unknown for a HEAD that does not answer in time, and the others still answer', async () => {
    const exists: GmExists = (_, digest) =>
      digest === d(1) ? new Promise<boolean>(() => undefined) : Promise.resolve(false);
    const started = Date.now();
    const found = await checkGm([policy({ gm: pins(d(1), d(2)) })], exists, { timeoutMs: 50 });
    assert.ok(Date.now() - started < 2_000);
    assert.deepEqual(
      found.map((f) => [f.state, f.message]),
      [
        ['unknown', 'no answer within 50 ms'],
        ['missing', undefined],
      ],
    );
  });

  for (const [bound, expected] of [
    [undefined, 8],
    [3, 3],
  ] as const)
    it(`has at most ${String(expected)} HEADs in flight${bound === undefined ? ' by default' : ''}`, async () => {
      let inFlight = 0;
      let most = 0;
      const exists: GmExists = async () => {
        inFlight++;
        most = Math.max(most, inFlight);
        await new Promise((r) => setTimeout(r, 5));
        inFlight--;
        return true;
      };
      const many = Array.from({ length: 30 }, (_, i) => d(i + 1));
      const found = await checkGm(
        [
          policy({ gm: pins(...many.slice(0, 20)) }),
          policy({ name: 'b', gm: pins(...many.slice(20)) }),
        ],
        exists,
        bound === undefined ? {} : { concurrency: bound },
      );
      assert.equal(found.length, 30);
      assert.ok(found.every((f) => f.state === 'present'));
      assert.equal(most, expected);
    });
});

describe('the GM watch', () => {
  it('keeps the last findings of the live policies until cleared', async () => {
    let current = [policy({ gm: pins(d(1)) })];
    let there = true;
    const watch = createGmWatch({ policies: () => current, exists: () => Promise.resolve(there) });
    assert.equal(watch.findings(), undefined);
    await watch.check();
    assert.deepEqual(
      watch.findings()?.map((f) => f.state),
      ['present'],
    );
    there = false;
    current = [policy({ gm: pins(d(1), d(2)) })];
    await watch.check();
    assert.deepEqual(
      watch.findings()?.map((f) => [f.digest, f.state]),
      [
        [d(1), 'missing'],
        [d(2), 'missing'],
      ],
    );
    watch.clear();
    assert.equal(watch.findings(), undefined);
  });
});
