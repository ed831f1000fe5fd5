// SPDX-License-Identifier: Apache-2.0
import { fleetLockStoreConformance } from '../../testkit/fleetlock-store-conformance.ts';
import { FakeFleetLockStore } from './fleetlock-store.fake.ts';

fleetLockStoreConformance({
  name: 'FakeFleetLockStore',
  start: () => {
    // One shared backend; each client is a view that closes on its own.
    const backend = new FakeFleetLockStore({ latencyMs: 1 });
    return Promise.resolve({
      open: () => ({
        read: (group) => backend.read(group),
        write: (group, sem, revision) => backend.write(group, sem, revision),
        close: () => Promise.resolve(),
      }),
      stop: () => backend.close(),
    });
  },
});
