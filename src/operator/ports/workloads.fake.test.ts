// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { workloadsConformance } from '../../testkit/workloads-conformance.ts';
import { FakeWorkloads } from './workloads.fake.ts';

workloadsConformance({
  name: 'fake',
  start() {
    const fake = new FakeWorkloads(2);
    const images = ['r.example/app:1', 'r.example/app:2', 'r.example/app:3'] as const;
    return Promise.resolve({
      workloads: fake,
      create(ref, image, labels) {
        fake.put({
          ...ref,
          labels,
          containers: [
            { name: 'init', image, init: true },
            { name: 'app', image },
            { name: 'side', image },
          ],
        });
        return Promise.resolve();
      },
      edit(ref, container, image) {
        fake.edit(ref, container, image);
        return Promise.resolve();
      },
      images,
      platforms: ['linux/amd64'],
      rolloutTimeoutMs: 2_000,
      stop: () => Promise.resolve(),
    });
  },
});

describe('the fake workloads', () => {
  it('never finishes a rollout onto an unready image', async () => {
    const fake = new FakeWorkloads(0);
    const ref = { kind: 'Deployment', namespace: 'a', name: 'w' } as const;
    fake.put({ ...ref, labels: {}, containers: [{ name: 'app', image: 'x:1' }] });
    fake.unready.add('x:2');
    await fake.setImages(ref, [{ container: 'app', from: 'x:1', to: 'x:2' }]);
    for (let i = 0; i < 3; i++) assert.equal((await fake.progress(ref)).state, 'progressing');
    assert.equal((await fake.list())[0]?.available, false);
  });
});
