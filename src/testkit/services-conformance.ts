// SPDX-License-Identifier: Apache-2.0
/**
 * What every {@link Services} must do (src/agent/ports/services.ts); run against the fake and the
 * systemd units adapter (on a stand-in systemctl here, on real systemd in the VM tests).
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { ErrorCode } from '../core/errors.ts';
import type { Services } from '../agent/ports/services.ts';
import { rejectsWithCode } from './registry-conformance.ts';

/** One fresh set of services, all running, and the means to make one refuse to stop. */
export interface ServicesHarness {
  readonly services: Services;
  /** The names `running()` reports while everything runs. */
  readonly names: readonly string[];
  /** Make `name` refuse to stop (or let it stop again). */
  jam(name: string, jammed: boolean): Promise<void>;
  close(): Promise<void>;
}

const sorted = (xs: readonly string[]): string[] => [...xs].sort();

export function servicesConformance(name: string, create: () => Promise<ServicesHarness>): void {
  describe(`Services conformance: ${name}`, () => {
    const open: ServicesHarness[] = [];
    const fresh = async (): Promise<ServicesHarness> => {
      const h = await create();
      open.push(h);
      return h;
    };
    after(async () => {
      for (const h of open) await h.close();
    });

    it('lists every service while they run; starting running ones changes nothing', async () => {
      const h = await fresh();
      assert.deepEqual(sorted(await h.services.running()), sorted(h.names));
      await h.services.startAll();
      assert.deepEqual(sorted(await h.services.running()), sorted(h.names));
    });

    it('stops all of them, level-triggered, and starts them again', async () => {
      const h = await fresh();
      await h.services.stopAll();
      assert.deepEqual(await h.services.running(), []);
      await h.services.stopAll();
      assert.deepEqual(await h.services.running(), []);
      await h.services.startAll();
      await h.services.startAll();
      assert.deepEqual(sorted(await h.services.running()), sorted(h.names));
    });

    it('fails a stop that does not finish with MOLT_SERVICE_STOP_FAILED naming the service', async () => {
      const h = await fresh();
      const stuck = h.names[0] ?? assert.fail('the harness has no services');
      await h.jam(stuck, true);
      await rejectsWithCode(h.services.stopAll(), ErrorCode.ServiceStopFailed, stuck);
      assert.ok((await h.services.running()).includes(stuck), `${stuck} still runs`);
      await h.jam(stuck, false);
      await h.services.stopAll();
      assert.deepEqual(await h.services.running(), []);
      await h.services.startAll();
      assert.deepEqual(sorted(await h.services.running()), sorted(h.names));
    });
  });
}
