// SPDX-License-Identifier: Apache-2.0
// The operator API over a real socket with mutual TLS: handshakes, roles, the typed client, and a
// followed event stream that sees history appended after it connected.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Agent, fetch } from 'undici';
import { createCa, issueCertificate, type PemPair } from '../../platform/pki/certificates.ts';
import { isMoltError } from '../../core/errors.ts';
import { createOperatorClient, type OperatorClient } from '../../protocol/operator-client.ts';
import type { MemoryOperatorStore } from '../adapters/memory-store/operator-store.ts';
import { apiFixture } from '../../testkit/operator-api-fixture.ts';
import { createOperatorApi, type OperatorApi } from './server.ts';

describe('operator API over mutual TLS', () => {
  const dispatchers: Agent[] = [];
  const certs: Record<string, PemPair> = {};
  let ca: PemPair;
  let api: OperatorApi;
  let store: MemoryOperatorStore;

  before(async () => {
    ca = await createCa();
    const foreign = await createCa({ name: 'someone else' });
    const server = await issueCertificate({ ca, role: 'node', name: 'operator-1' });
    certs['operator'] = await issueCertificate({ ca, role: 'operator', name: 'alice' });
    certs['node'] = await issueCertificate({ ca, role: 'node', name: 'w-1' });
    certs['foreign'] = await issueCertificate({ ca: foreign, role: 'admin', name: 'mallory' });
    const f = await apiFixture();
    store = f.store;
    api = await createOperatorApi({ deps: f.deps, tls: { ca: ca.cert, ...server }, port: 0 });
  });
  after(async () => {
    await api.close();
    await Promise.all(dispatchers.map((d) => d.close()));
  });

  function client(who: string | undefined): OperatorClient {
    const dispatcher = new Agent({
      connect: { ca: ca.cert, ...(who === undefined ? {} : certs[who]) },
    });
    dispatchers.push(dispatcher);
    return createOperatorClient({
      baseUrl: api.url,
      fetch: async (url, init) => {
        const res = await fetch(url, { ...init, dispatcher });
        return { status: res.status, text: () => res.text(), body: res.body };
      },
    });
  }

  it('listens on the port it was given (0: a free one) and says where', () => {
    assert.match(api.url, /^https:\/\/127\.0\.0\.1:\d+$/);
    assert.notEqual(new URL(api.url).port, '0');
  });

  it('lets a node certificate read and refuses it writes', async () => {
    const node = client('node');
    assert.equal((await node.rollouts()).length, 4);
    assert.equal((await node.rollout('workers-1.1.0')).machines.length, 4);
    await assert.rejects(node.pause('workers-1.1.0'), (e) => isMoltError(e, 'MOLT_FORBIDDEN'));
  });

  it('lets an operator certificate pause and approve, with the typed client', async () => {
    const alice = client('operator');
    const paused = await alice.pause('workers-1.1.0', { reason: 'freeze' });
    assert.deepEqual([paused.changed, paused.rollout.state], [true, 'Paused']);
    await assert.rejects(alice.approve('workers-1.1.0'), (e) =>
      isMoltError(e, 'MOLT_ROLLOUT_STATE'),
    );
    await assert.rejects(alice.rollout('nope'), (e) => isMoltError(e, 'MOLT_ROLLOUT_NOT_FOUND'));
    const held = await alice.hold('w-4', { reason: 'bios update', for: '30m' });
    assert.equal(held.hold?.by, 'alice');
    assert.match(await alice.metrics(), /^molt_operator_rollouts\{state="Paused"\} 1$/m);
  });

  it('follows the history live over SSE', async () => {
    const before = (await client('node').history({ limit: 1000 })).at(-1)?.seq ?? 0;
    const seen: string[] = [];
    const stream = client('node').events({ follow: true, after: before });
    const iterator = stream[Symbol.asyncIterator]();
    const first = iterator.next();
    await store.appendHistory({ at: Date.now(), kind: 'warning', message: 'live one' });
    const r = await first;
    assert.equal(r.done, false);
    seen.push(r.value.message);
    await iterator.return?.();
    assert.deepEqual(seen, ['live one']);
  });

  it('refuses a foreign certificate and a missing one at the handshake', async () => {
    for (const who of ['foreign', undefined]) {
      await assert.rejects(client(who).rollouts(), (e) =>
        isMoltError(e, 'MOLT_OPERATOR_UNREACHABLE'),
      );
    }
  });
});
