// SPDX-License-Identifier: Apache-2.0
// The operator's agent gateway over real sockets and mutual TLS, against the agent's real API
// (fake agent service): it acts only on an agent presenting the certificate of the machine it
// means (a record "w-1" at m1's endpoint upgraded m1). Certificates from
// platform/pki, servers on loopback.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createAgentApi, type AgentApi } from '../../../agent/api/server.ts';
import { createFakeAgentService, type FakeAgentService } from '../../../agent/api/service.fake.ts';
import { createMemoryJournalStore } from '../../../agent/ports/journal-store.fake.ts';
import { isMoltError } from '../../../core/errors.ts';
import { createCa, issueCertificate, type PemPair } from '../../../platform/pki/certificates.ts';
import type { AgentGateway } from '../../ports/agents.ts';
import type { MachineRecord } from '../../ports/store.ts';
import { createAgentEventSource } from './events.ts';
import { createAgentGateway } from './index.ts';
import { machineFixture } from '../../../testkit/operator-store-fixtures.ts';

const record = (id: string, endpoint: string): MachineRecord => ({
  ...machineFixture(id),
  endpoint,
});

describe('the agent gateway checks who the agent is', () => {
  let ca: PemPair;
  let m1: { api: AgentApi; service: FakeAgentService };
  let gateway: AgentGateway;
  let operator: PemPair;

  const agent = async (name: string): Promise<{ api: AgentApi; service: FakeAgentService }> => {
    const service = createFakeAgentService();
    const server = await issueCertificate({ ca, role: 'node', name });
    const api = await createAgentApi({
      service,
      journal: createMemoryJournalStore(),
      tls: { ca: ca.cert, ...server },
    });
    return { api, service };
  };

  before(async () => {
    ca = await createCa();
    operator = await issueCertificate({ ca, role: 'operator', name: 'molt-operator' });
    m1 = await agent('m1');
    gateway = createAgentGateway({ ca: ca.cert, ...operator });
  });
  after(async () => {
    await gateway.close();
    await m1.api.close();
  });

  it('talks to an agent presenting its own machine’s certificate', async () => {
    const status = await gateway.status(record('m1', m1.api.url));
    assert.equal(status.phase, 'Idle');
  });

  it('refuses an agent presenting another machine’s certificate, naming both, and never upgrades it', async () => {
    // The observed attack: a node "w-1" registered m1's endpoint as its own. m1 is asked first on
    // purpose — a pool shared between the two records would reuse m1's verified connection.
    const impostor = record('w-1', m1.api.url);
    await gateway.status(record('m1', m1.api.url));
    const refused = await gateway.status(impostor).then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.ok(isMoltError(refused), String(refused));
    assert.equal(refused.code, 'MOLT_AGENT_IDENTITY');
    assert.equal(refused.retryable, false);
    assert.match(refused.message, /presents the certificate of m1, not the certificate of w-1/);
    assert.match(refused.message, new RegExp(m1.api.url.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')));
    await assert.rejects(gateway.upgrade(impostor, { image: 'r/i@sha256:1' }), {
      code: 'MOLT_AGENT_IDENTITY',
    });
    await assert.rejects(gateway.rollback(impostor), { code: 'MOLT_AGENT_IDENTITY' });
    assert.deepEqual(m1.service.submitted, [], 'nothing was sent to m1 on w-1’s behalf');
  });

  it('sets and clears a machine’s hold on its own agent only, for the person named', async () => {
    const until = Date.now() + 3_600_000;
    const set = await gateway.setHold(record('m1', m1.api.url), {
      reason: 'disk swap',
      until,
      onBehalfOf: 'alice',
    });
    assert.deepEqual(m1.service.holdRequests.at(-1), {
      body: { reason: 'disk swap', until: new Date(until).toISOString(), onBehalfOf: 'alice' },
      identity: { name: 'molt-operator', role: 'operator' },
    });
    assert.equal(set.hold?.onBehalfOf, 'alice');
    const cleared = await gateway.clearHold(record('m1', m1.api.url));
    assert.equal(cleared.hold, null);
    assert.equal(cleared.released?.onBehalfOf, 'alice');
    const asked = m1.service.holdRequests.length;
    const impostor = record('w-1', m1.api.url);
    await assert.rejects(gateway.setHold(impostor, { reason: 'x', until, onBehalfOf: 'bob' }), {
      code: 'MOLT_AGENT_IDENTITY',
    });
    await assert.rejects(gateway.clearHold(impostor), { code: 'MOLT_AGENT_IDENTITY' });
    assert.equal(m1.service.holdRequests.length, asked, 'nothing was sent to m1 on w-1’s behalf');
  });

  it('refuses a node certificate of any other name (the operator’s own API certificate)', async () => {
    // Only node certificates can serve at all (EKU), so the API's own certificate is the stranger.
    const stranger = await agent('operator-api');
    try {
      await assert.rejects(gateway.status(record('w-2', stranger.api.url)), {
        code: 'MOLT_AGENT_IDENTITY',
        message: /presents the certificate of operator-api, not the certificate of w-2/,
      });
    } finally {
      await stranger.api.close();
    }
  });

  it('follows only the event stream of the machine it means', { timeout: 10_000 }, async () => {
    const events = createAgentEventSource({ ca: ca.cert, ...operator });
    try {
      const stop = new AbortController();
      const stream = events.follow(record('w-1', m1.api.url), stop.signal)[Symbol.asyncIterator]();
      await assert.rejects(stream.next(), { code: 'MOLT_AGENT_IDENTITY' });
      stop.abort();
    } finally {
      await events.close();
    }
  });
});
