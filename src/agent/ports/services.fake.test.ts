// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { ErrorCode } from '../../core/errors.ts';
import { rejectsWithCode } from '../../testkit/registry-conformance.ts';
import { servicesConformance } from '../../testkit/services-conformance.ts';
import { createFakeServices } from './services.fake.ts';

it('fake services start and stop level-triggered, and can refuse to stop', async () => {
  const s = createFakeServices(['etcd']);
  assert.deepEqual(await s.running(), ['etcd']);
  await s.startAll();
  await s.stopAll();
  await s.stopAll();
  assert.deepEqual(await s.running(), []);
  await s.startAll();
  s.stuck = true;
  await rejectsWithCode(s.stopAll(), ErrorCode.ServiceStopFailed, 'etcd');
  assert.deepEqual(await s.running(), ['etcd']);
  assert.deepEqual(s.calls, ['startAll', 'stopAll', 'stopAll', 'startAll', 'stopAll']);
});

servicesConformance('fake', () => {
  const services = createFakeServices(['etcd', 'kube-apiserver']);
  return Promise.resolve({
    services,
    names: ['etcd', 'kube-apiserver'],
    jam: (_name: string, jammed: boolean) => {
      services.stuck = jammed;
      return Promise.resolve();
    },
    close: () => Promise.resolve(),
  });
});
