// SPDX-License-Identifier: Apache-2.0
import { clusterLeaseConformance } from '../../testkit/cluster-lease-conformance.ts';
import { createFakeClusterLease, createFakeLeaseBackend } from './cluster-lease.fake.ts';

clusterLeaseConformance({
  name: 'fake',
  ttlSeconds: 30,
  rebootTtlSeconds: 600,
  start: () => {
    const backend = createFakeLeaseBackend();
    return Promise.resolve({
      open: (holder: string) => createFakeClusterLease(backend, holder),
      elapse: (seconds: number) => {
        backend.advance(seconds * 1000);
        return Promise.resolve();
      },
      loseKey: () => {
        backend.loseKey();
        return Promise.resolve();
      },
      stop: () => Promise.resolve(),
    });
  },
});
