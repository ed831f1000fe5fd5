// SPDX-License-Identifier: Apache-2.0
// The operator's side of the image route over real sockets and mutual TLS, against the agent's
// real API (its routes, permission hook and error table; a fake container runtime behind it):
// the list reaches the runtime, the agent's own error codes are kept, and an agent presenting
// another machine's certificate is sent nothing.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createAgentApi, type AgentApi } from '../../../agent/api/server.ts';
import { createFakeAgentService } from '../../../agent/api/service.fake.ts';
import { createPinnedImages } from '../../../agent/machine/pinned-images.ts';
import {
  createFakeImagePins,
  createMemoryPinnedRecord,
  type FakeImagePins,
} from '../../../agent/ports/image-pins.fake.ts';
import { createMemoryJournalStore } from '../../../agent/ports/journal-store.fake.ts';
import { createCa, issueCertificate } from '../../../platform/pki/certificates.ts';
import type { NodePins } from '../../ports/node-pins.ts';
import type { MachineRecord } from '../../ports/store.ts';
import { createAgentNodePins } from './index.ts';
import { machineFixture } from '../../../testkit/operator-store-fixtures.ts';

const ref = (c: string): string => `reg:5000/molt/dns@sha256:${c.repeat(64)}`;
const record = (id: string, endpoint: string): MachineRecord => ({
  ...machineFixture(id),
  endpoint,
});

describe('the agents’ image route, from the operator', () => {
  let node: AgentApi;
  let worker: AgentApi;
  let runtime: FakeImagePins;
  let pins: NodePins;

  before(async () => {
    const ca = await createCa();
    const tlsOf = async (name: string) => ({
      ca: ca.cert,
      ...(await issueCertificate({ ca, role: 'node', name })),
    });
    runtime = createFakeImagePins([ref('a'), ref('b')]);
    const common = { service: createFakeAgentService(), journal: createMemoryJournalStore() };
    node = await createAgentApi({
      ...common,
      tls: await tlsOf('node-1'),
      pinnedImages: createPinnedImages({ pins: runtime, record: createMemoryPinnedRecord() }),
    });
    worker = await createAgentApi({ ...common, tls: await tlsOf('lab-1') });
    const operator = await issueCertificate({ ca, role: 'operator', name: 'molt-operator' });
    pins = createAgentNodePins({ ca: ca.cert, ...operator });
  });
  after(async () => {
    await pins.close();
    await Promise.all([node.close(), worker.close()]);
  });

  it('sets the list on the machine’s container runtime', async () => {
    const m = record('node-1', node.url);
    assert.deepEqual(await pins.setPinned(m, [ref('a'), ref('b')]), {
      pinned: [ref('a'), ref('b')],
      unpinned: [],
    });
    assert.deepEqual(await pins.setPinned(m, [ref('b')]), {
      pinned: [ref('b')],
      unpinned: [ref('a')],
    });
    assert.deepEqual(await runtime.pinned(), [ref('b')]);
  });

  it("keeps the agent's own error codes", async () => {
    await assert.rejects(pins.setPinned(record('lab-1', worker.url), [ref('a')]), {
      code: 'MOLT_NOT_KUBERNETES_NODE',
    });
    await assert.rejects(pins.setPinned(record('node-1', node.url), [ref('c')]), {
      code: 'MOLT_IMAGE_PIN_FAILED',
    });
  });

  it('refuses an agent presenting another machine’s certificate, sending it nothing', async () => {
    runtime.pullable.add(ref('d'));
    const pulls = runtime.pulls.length;
    await assert.rejects(pins.setPinned(record('node-2', node.url), [ref('d')]), {
      code: 'MOLT_AGENT_IDENTITY',
    });
    assert.equal(runtime.pulls.length, pulls);
    assert.deepEqual(await runtime.pinned(), [ref('b')]);
  });
});
