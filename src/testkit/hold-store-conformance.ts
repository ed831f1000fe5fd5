// SPDX-License-Identifier: Apache-2.0
/** What every {@link HoldStore} must do; run against the fake and the file adapter. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { HoldStore } from '../agent/ports/hold-store.ts';
import type { HoldView } from '../protocol/agent-hold.ts';

const hold = (reason: string): HoldView => ({
  reason,
  until: '2026-11-24T06:00:00.000Z',
  setBy: { name: 'operator', role: 'operator' },
  onBehalfOf: 'alice',
  setAt: '2026-11-23T06:00:00.000Z',
});

export function holdStoreConformance(name: string, create: () => Promise<HoldStore>): void {
  describe(`HoldStore conformance: ${name}`, () => {
    it('starts without a hold and returns the last one saved', async () => {
      const store = await create();
      assert.equal(await store.load(), undefined);
      await store.save(hold('disk swap'));
      await store.save(hold('audit'));
      assert.deepEqual(await store.load(), hold('audit'));
    });

    it('clears the hold, also when there is none', async () => {
      const store = await create();
      await store.save(undefined);
      await store.save(hold('disk swap'));
      await store.save(undefined);
      assert.equal(await store.load(), undefined);
    });

    it('keeps a hold without onBehalfOf as it is', async () => {
      const store = await create();
      const direct: HoldView = {
        reason: 'bios update',
        until: '2026-11-24T06:00:00.000Z',
        setBy: { name: 'root', role: 'admin' },
        setAt: '2026-11-23T06:00:00.000Z',
      };
      await store.save(direct);
      assert.deepEqual(await store.load(), direct);
    });
  });
}
