// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { bootloaderConformance, testManifest } from '../../testkit/bootloader-conformance.ts';
import { createFakeBootloader } from './bootloader.fake.ts';

bootloaderConformance('fake', () => {
  const fake = createFakeBootloader();
  return Promise.resolve({ bootloader: fake, boot: () => Promise.resolve(fake.firmwareBoot()) });
});

it('the fake throws an injected failure once and records mutating calls', async () => {
  const fake = createFakeBootloader();
  fake.failures.set('writeEntry', new Error('disk full'));
  await assert.rejects(() => fake.writeEntry('A', testManifest('A', 1)), /disk full/);
  await fake.writeEntry('A', testManifest('A', 1));
  await fake.commit('A');
  assert.deepEqual(fake.calls, ['writeEntry A', 'commit A']);
});
