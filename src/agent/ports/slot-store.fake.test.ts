// SPDX-License-Identifier: Apache-2.0
import {
  slotStoreConformance,
  type SlotStoreHarness,
} from '../../testkit/slot-store-conformance.ts';
import { FakeSlotStore } from './slot-store.fake.ts';

function harness(partitionBytes?: number): Promise<SlotStoreHarness> {
  const store = new FakeSlotStore(
    () => new Date(),
    partitionBytes === undefined ? {} : { partitionBytes },
  );
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
    ...(partitionBytes !== undefined && { partitionBytes }),
  });
}

slotStoreConformance('FakeSlotStore', () => harness());
slotStoreConformance('FakeSlotStore, rootfs in place', () => harness(4096));
