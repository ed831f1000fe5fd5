// SPDX-License-Identifier: Apache-2.0
import { leadershipConformance } from '../../testkit/leadership-conformance.ts';
import { FakeLeadershipBackend, createFakeLeadership } from './leadership.fake.ts';

const ttlSeconds = 10;

leadershipConformance({
  name: 'fake',
  ttlSeconds,
  start: () => {
    const backend = new FakeLeadershipBackend();
    return Promise.resolve({
      open: (id: string) => createFakeLeadership(backend, id, { ttlSeconds }),
      elapse: (seconds: number) => {
        backend.advance(seconds * 1000);
        return Promise.resolve();
      },
      loseClaim: () => {
        backend.loseClaim();
        return Promise.resolve();
      },
      stop: () => Promise.resolve(),
    });
  },
});
