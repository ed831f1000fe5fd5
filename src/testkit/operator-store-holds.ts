// SPDX-License-Identifier: Apache-2.0
/** Holds and blocked releases in the operator store conformance suite (`operator-store-conformance.ts`). */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import type { OperatorStore } from '../operator/ports/store.ts';
import { fresh } from './operator-store-fixtures.ts';

export function holdAndBlockConformance(storeOf: () => OperatorStore): void {
  it('sets, replaces and clears holds', async () => {
    const store = storeOf();
    const m = fresh('m');
    await store.setHold(m, { reason: 'disk swap', until: 1_900_000_000_000, by: 'ops' });
    await store.setHold(m, { reason: 'longer', until: 1_900_000_100_000 });
    assert.deepEqual((await store.read()).holds[m], {
      reason: 'longer',
      until: 1_900_000_100_000,
    });
    await store.setHold(m, undefined);
    await store.setHold(m, undefined); // idempotent
    assert.equal((await store.read()).holds[m], undefined);
  });

  it('blocks a release for one pool or every pool, ordered by digest, and lifts each block alone', async () => {
    const store = storeOf();
    const digest = `sha256:${fresh('d').padEnd(64, '0').slice(0, 64)}`;
    const other = `sha256:${fresh('e').padEnd(64, '0').slice(0, 64)}`;
    const ofThese = async (): Promise<readonly unknown[]> =>
      (await store.read()).blocks.filter((b) => b.digest === digest || b.digest === other);
    const pool = {
      digest,
      pool: 'a/b c',
      reason: 'halted',
      by: 'operator',
      at: 5,
      rollout: 'r1',
    };
    const all = { digest, version: '1.2.0', reason: 'CVE', by: 'ops', at: 6 };
    await store.putBlock(pool);
    await store.putBlock(all);
    await store.putBlock({ digest: other, pool: 'p', reason: 'x', by: 'ops', at: 7 });
    const [lo, hi] = digest < other ? [digest, other] : [other, digest];
    assert.deepEqual(
      (await ofThese()).map((b) => (b as { digest: string }).digest),
      [lo, lo, hi],
    );
    assert.deepEqual(
      (await ofThese()).filter((b) => (b as { digest: string }).digest === digest),
      [all, pool],
    );
    await store.putBlock({ ...all, reason: 'CVE-2026-1' });
    await store.removeBlock(digest, 'a/b c');
    await store.removeBlock(digest, 'a/b c'); // idempotent
    assert.deepEqual(
      (await ofThese()).filter((b) => (b as { digest: string }).digest === digest),
      [{ ...all, reason: 'CVE-2026-1' }],
    );
    await store.removeBlock(digest, undefined);
    await store.removeBlock(other, 'p');
    assert.deepEqual(await ofThese(), []);
  });
}
