// SPDX-License-Identifier: Apache-2.0
import { slotStoreConformance } from '../../testkit/slot-store-conformance.ts';
import { FakeSlotStore } from './slot-store.fake.ts';

slotStoreConformance('FakeSlotStore', () => {
  const store = new FakeSlotStore();
  return Promise.resolve({
    store,
    stage: (slot, image) => {
      store.stage(slot, image);
      return Promise.resolve();
    },
    corrupt: (slot, name) => {
      store.corrupt(slot, name);
      return Promise.resolve();
    },
    close: () => Promise.resolve(),
  });
});
