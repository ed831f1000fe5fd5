// SPDX-License-Identifier: Apache-2.0
import { fleetLockStoreConformance } from '../../../testkit/fleetlock-store-conformance.ts';
import { MemoryFleetLockBackend, MemoryFleetLockStore } from './store.ts';

fleetLockStoreConformance({
  name: 'memory',
  start: () => {
    // One shared backend; each client is a store of its own that closes on its own.
    const backend = new MemoryFleetLockBackend();
    return Promise.resolve({
      open: () => new MemoryFleetLockStore({ backend }),
      stop: () => Promise.resolve(),
    });
  },
});
