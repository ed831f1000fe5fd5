// SPDX-License-Identifier: Apache-2.0
import { startFakeRegistry } from '../../src/testkit/fake-registry.ts';
import { registryConformance } from '../../src/testkit/registry-conformance.ts';
import { startRegistry } from '../../src/testkit/registry-process.ts';

registryConformance({
  name: 'docker-registry 2.8 (Debian)',
  start: async () => {
    const r = await startRegistry();
    return { client: { registry: r.host, insecure: true }, stop: () => r.stop() };
  },
});

registryConformance({
  name: 'in-process fake registry',
  start: async () => {
    const f = await startFakeRegistry({
      tagPaging: { link: 'last', maxPageSize: 2 },
      referrersPageSize: 1,
    });
    return { client: { registry: f.host, insecure: true }, stop: () => f.close() };
  },
});
