// SPDX-License-Identifier: Apache-2.0
// The operator's follower of an agent's events over real sockets and mutual TLS, against the
// agent's real API (fake agent service, in-memory journal): it sees only live events, an abort ends
// it at once, and the agent going away ends it so the watch reconnects.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createAgentApi, type AgentApi } from '../../../agent/api/server.ts';
import { createFakeAgentService } from '../../../agent/api/service.fake.ts';
import { createMemoryJournalStore } from '../../../agent/ports/journal-store.fake.ts';
import { createCa, issueCertificate, type PemPair } from '../../../platform/pki/certificates.ts';
import type { MachineRecord } from '../../ports/store.ts';
import { createAgentEventSource } from './events.ts';

describe('following an agent over mutual TLS', () => {
  const memory = createMemoryJournalStore();
  // Told each time a stream subscribes to the journal: the follower is connected from then on.
  let connected = (): void => undefined;
  const journal: typeof memory = {
    ...memory,
    subscribe: (listener) => {
      connected();
      return memory.subscribe(listener);
    },
  };
  const nextConnection = () =>
    new Promise<void>((resolve) => {
      connected = resolve;
    });
  let ca: PemPair;
  let api: AgentApi;
  let source: ReturnType<typeof createAgentEventSource>;
  let machine: MachineRecord;
  const append = (phase: string, kind: 'phase' | 'progress' = 'phase') =>
    journal.append({
      operationId: 'op-1',
      time: new Date().toISOString(),
      kind,
      phase,
      status: 'started',
      message: phase,
    });

  before(async () => {
    ca = await createCa();
    const server = await issueCertificate({ ca, role: 'node', name: 'w-1' });
    const operator = await issueCertificate({ ca, role: 'operator', name: 'molt-operator' });
    api = await createAgentApi({
      service: createFakeAgentService(),
      journal,
      tls: { ca: ca.cert, ...server },
    });
    source = createAgentEventSource({ ca: ca.cert, ...operator });
    machine = { id: 'w-1', endpoint: api.url, role: 'worker', pool: 'p', labels: {} };
  });
  after(async () => {
    await api.close();
    await source.close();
  });

  it('streams only what the agent journals after it connects, until aborted', async () => {
    await append('Pulling');
    const stop = new AbortController();
    const connecting = nextConnection();
    let accepted = 0;
    const it = source.follow(machine, stop.signal, () => accepted++)[Symbol.asyncIterator]();
    const first = it.next();
    await connecting;
    await append('Downloading', 'progress');
    await append('Rebooting');
    const seen = await first;
    assert.equal(seen.done, false);
    assert.equal(seen.value.phase, 'Downloading', 'the first live event, none from before');
    const second = await it.next();
    assert.equal(second.done, false);
    assert.equal(second.value.phase, 'Rebooting');
    assert.equal(accepted, 1, 'told once that the agent accepted the stream');
    const pending = it.next();
    stop.abort();
    // Ended or failed, either way at once: the watch stops following.
    const ended = await pending.then(
      (r) => r.done,
      () => true,
    );
    assert.equal(ended, true);
  });

  it('ends when the agent goes away', async () => {
    const connecting = nextConnection();
    const it = source.follow(machine, new AbortController().signal)[Symbol.asyncIterator]();
    const pending = it.next();
    await connecting;
    await api.close();
    await pending.then(
      (r) => {
        assert.equal(r.done, true);
      },
      (e: unknown) => {
        assert.ok(e instanceof Error);
      },
    );
  });
});
