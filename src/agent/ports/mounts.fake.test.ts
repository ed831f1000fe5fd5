// SPDX-License-Identifier: Apache-2.0
import { mountsConformance } from '../../testkit/mounts-conformance.ts';
import { createFakeMounts } from './mounts.fake.ts';

mountsConformance('fake', () => {
  const mounts = createFakeMounts();
  return Promise.resolve({
    mounts,
    mounted: () => Promise.resolve(mounts.mounted),
    hold: () => {
      mounts.busy = true;
      return Promise.resolve(() => {
        mounts.busy = false;
        return Promise.resolve();
      });
    },
    put: (name: string) => {
      mounts.files.add(name);
      return Promise.resolve();
    },
    has: (name: string) => Promise.resolve(mounts.files.has(name)),
    close: () => Promise.resolve(),
  });
});
