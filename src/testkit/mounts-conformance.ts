// SPDX-License-Identifier: Apache-2.0
/**
 * What every {@link Mounts} must do (src/agent/ports/mounts.ts), in the order the upgrade uses it:
 * release before the slot write (busy fails, and the abort's mount brings it back), mount after,
 * wipe once per operation. Run against the fake, the lab's directory and a real partition on a
 * loop device (test/integration/partition-mounts.test.ts).
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { ErrorCode } from '../core/errors.ts';
import type { Mounts } from '../agent/ports/mounts.ts';
import { rejectsWithCode } from './registry-conformance.ts';

/** One fresh, mounted EPHEMERAL and ways to look at it from outside the port. */
export interface MountsHarness {
  readonly mounts: Mounts;
  mounted(): Promise<boolean>;
  /** Something starts holding EPHEMERAL; the returned function lets go. */
  hold(): Promise<() => Promise<void>>;
  /** Create a file on EPHEMERAL (which must be mounted). */
  put(name: string): Promise<void>;
  has(name: string): Promise<boolean>;
  close(): Promise<void>;
}

export function mountsConformance(name: string, create: () => Promise<MountsHarness>): void {
  describe(`Mounts conformance: ${name}`, () => {
    const open: MountsHarness[] = [];
    const fresh = async (): Promise<MountsHarness> => {
      const h = await create();
      open.push(h);
      return h;
    };
    after(async () => {
      for (const h of open) await h.close();
    });

    it('releases and mounts again, both level-triggered, keeping the data', async () => {
      const h = await fresh();
      assert.equal(await h.mounted(), true);
      await h.put('etcd-data');
      await h.mounts.release();
      assert.equal(await h.mounted(), false);
      await h.mounts.release();
      await h.mounts.mount();
      await h.mounts.mount();
      assert.equal(await h.mounted(), true);
      assert.equal(await h.has('etcd-data'), true);
    });

    it('refuses to release a busy mount with MOLT_MOUNT_BUSY, and the undo mount succeeds', async () => {
      const h = await fresh();
      const letGo = await h.hold();
      try {
        await rejectsWithCode(h.mounts.release(), ErrorCode.MountBusy, 'busy');
        assert.equal(await h.mounted(), true);
        await h.mounts.mount(); // the abort's MountEphemeral
        assert.equal(await h.mounted(), true);
      } finally {
        await letGo();
      }
      await h.mounts.release();
      assert.equal(await h.mounted(), false);
    });

    it('wipes once per operation: a re-run keeps what was written since', async () => {
      const h = await fresh();
      await h.put('old-data');
      await h.mounts.wipe('op-1');
      await h.mounts.mount();
      assert.equal(await h.has('old-data'), false);
      await h.put('new-data');
      await h.mounts.wipe('op-1');
      await h.mounts.mount();
      assert.equal(await h.has('new-data'), true, 'a re-run of the same operation wipes nothing');
      await h.mounts.wipe('op-2');
      await h.mounts.mount();
      assert.equal(await h.has('new-data'), false);
    });

    it('wipes a released EPHEMERAL too (the wipe runs after the reboot, before the mount)', async () => {
      const h = await fresh();
      await h.put('old-data');
      await h.mounts.release();
      await h.mounts.wipe('op-3');
      await h.mounts.mount();
      assert.equal(await h.has('old-data'), false);
    });
  });
}
