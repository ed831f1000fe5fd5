// SPDX-License-Identifier: Apache-2.0
// Real sockets, real mutual TLS: what inject() cannot show (handshake failures, streaming, resume).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:tls';
import { Agent, fetch } from 'undici';
import { createCa, issueCertificate, type PemPair } from '../../platform/pki/certificates.ts';
import { ErrorCode, isMoltError } from '../../core/errors.ts';
import { createAgentClient, type AgentClient } from '../../protocol/agent-client.ts';
import type { AgentEvent } from '../../protocol/agent.ts';
import { createMemoryJournalStore } from '../ports/journal-store.fake.ts';
import type { NewAgentEvent } from '../ports/journal-store.ts';
import { createFakeAgentService } from './service.fake.ts';
import { createAgentApi, type AgentApi } from './server.ts';

const dayMs = 86_400_000;

async function nextEvent(it: AsyncIterator<AgentEvent>): Promise<AgentEvent> {
  const r = await it.next();
  assert.equal(r.done, false, 'the stream ended early');
  return r.value;
}

describe('agent API over mutual TLS', () => {
  const service = createFakeAgentService();
  const journal = createMemoryJournalStore();
  const agents: Agent[] = [];
  let api: AgentApi;
  let ca: PemPair;
  const certs: Record<string, PemPair> = {};

  before(async () => {
    ca = await createCa();
    const foreign = await createCa({ name: 'someone else' });
    const server = await issueCertificate({ ca, role: 'node', name: 'node-1' });
    certs['operator'] = await issueCertificate({ ca, role: 'operator', name: 'alice' });
    certs['admin'] = await issueCertificate({ ca, role: 'admin', name: 'root' });
    certs['node'] = await issueCertificate({ ca, role: 'node', name: 'node-2' });
    certs['foreign'] = await issueCertificate({ ca: foreign, role: 'admin', name: 'mallory' });
    certs['expired'] = await issueCertificate({
      ca,
      role: 'admin',
      name: 'old',
      now: new Date(Date.now() - 30 * dayMs),
      days: 1,
    });
    api = await createAgentApi({ service, journal, tls: { ca: ca.cert, ...server } });
  });
  after(async () => {
    await api.close();
    await Promise.all(agents.map((a) => a.close()));
  });

  function client(who: string | undefined): AgentClient {
    const pair = who === undefined ? {} : certs[who];
    const agent = new Agent({ connect: { ca: ca.cert, ...pair } });
    agents.push(agent);
    return createAgentClient({
      baseUrl: api.url,
      fetch: async (url, init) => {
        const res = await fetch(url, { ...init, dispatcher: agent });
        return { status: res.status, text: () => res.text(), body: res.body };
      },
    });
  }

  /** A bare handshake with `who`'s certificate: the error code, 'closed' (no alert) or 'open'. */
  function handshake(who: string | undefined): Promise<string> {
    const url = new URL(api.url);
    return new Promise((resolve) => {
      const socket = connect({
        host: url.hostname,
        port: Number(url.port),
        ca: ca.cert,
        ...(who === undefined ? {} : certs[who]),
      });
      let verdict = 'closed';
      const timer = setTimeout(() => {
        verdict = 'open';
        socket.destroy();
      }, 1_500);
      socket.on('error', (e: NodeJS.ErrnoException) => (verdict = e.code ?? e.message));
      socket.on('close', () => {
        clearTimeout(timer);
        resolve(verdict);
      });
    });
  }

  const append = (
    operationId: string,
    kind: AgentEvent['kind'],
    phase: string,
  ): Promise<AgentEvent> =>
    journal.append({
      operationId,
      time: new Date().toISOString(),
      kind,
      phase,
      status: kind === 'result' ? 'done' : 'started',
      message: phase,
      ...(kind === 'result' && { result: { result: 'Succeeded' as const } }),
    } satisfies NewAgentEvent);

  it('lets an operator read the status and start an upgrade', async () => {
    const c = client('operator');
    assert.equal((await c.status()).node, 'node-1');
    const accepted = await c.upgrade({ image: 'reg.example/os:2.0.0' });
    assert.match(accepted.operationId, /^op-\d+$/);
    assert.deepEqual(service.submitted.at(-1)?.identity, { name: 'alice', role: 'operator' });
    service.running = undefined;
  });

  it('forbids the node role to upgrade (403 MOLT_FORBIDDEN), but lets it read', async () => {
    const c = client('node');
    await c.status();
    await assert.rejects(
      c.upgrade({ image: 'x' }),
      (e) => isMoltError(e, ErrorCode.Forbidden) && /node-2 \(role node\)/.test(e.message),
    );
  });

  it('needs admin for force', async () => {
    await assert.rejects(
      client('operator').reboot({ force: true }),
      (e) => isMoltError(e, ErrorCode.Forbidden) && /admin/.test(e.hint ?? ''),
    );
    const accepted = await client('admin').reboot({ force: true });
    assert.equal(service.submitted.at(-1)?.identity.role, 'admin');
    assert.ok(accepted.operationId);
    service.running = undefined;
  });

  it('answers busy with 409 and the running operation id', async () => {
    service.running = {
      id: 'op-99',
      kind: 'upgrade',
      phase: 'Draining',
      startedAt: new Date().toISOString(),
    };
    await assert.rejects(
      client('operator').rollback(),
      (e) => isMoltError(e, ErrorCode.AgentBusy) && e.details?.['operationId'] === 'op-99',
    );
    service.running = undefined;
  });

  it('fails the handshake without a client certificate', async () => {
    assert.equal(await handshake(undefined), 'ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED');
    await assert.rejects(client(undefined).status(), (e) =>
      isMoltError(e, ErrorCode.AgentUnreachable),
    );
  });

  it('refuses a certificate from a foreign CA and an expired one before any route', async () => {
    const before = service.submitted.length;
    assert.equal(await handshake('operator'), 'open');
    assert.equal(await handshake('foreign'), 'closed');
    assert.equal(await handshake('expired'), 'closed');
    await assert.rejects(client('foreign').reboot(), (e) =>
      isMoltError(e, ErrorCode.AgentUnreachable),
    );
    await assert.rejects(client('expired').reboot(), (e) =>
      isMoltError(e, ErrorCode.AgentUnreachable),
    );
    assert.equal(service.submitted.length, before);
  });

  it('streams live events while following and resumes after Last-Event-ID', async () => {
    await append('op-s', 'phase', 'Pulling');
    const c = client('node');
    const seen: string[] = [];
    const stream = c.events({ operation: 'op-s', follow: true })[Symbol.asyncIterator]();
    const first = await nextEvent(stream);
    seen.push(`${first.phase}:${String(first.seq)}`);
    // Appended after the stream opened: must arrive live.
    await append('op-s', 'phase', 'Cordoning');
    const second = await nextEvent(stream);
    seen.push(`${second.phase}:${String(second.seq)}`);
    await stream.return?.();
    assert.deepEqual(seen, ['Pulling:1', 'Cordoning:2']);

    // Missed while disconnected, then live, then the result ends the stream.
    await append('op-s', 'phase', 'Draining');
    const resumed: string[] = [];
    const done = (async () => {
      for await (const e of c.events({ operation: 'op-s', follow: true, lastEventId: 'op-s:2' })) {
        resumed.push(`${e.phase}:${String(e.seq)}`);
        if (e.phase === 'Draining') {
          await append('op-other', 'phase', 'Pulling');
          await append('op-s', 'result', 'Idle');
        }
      }
    })();
    await done;
    assert.deepEqual(resumed, ['Draining:3', 'Idle:4']);
  });

  it('ends open streams when the API closes, so followers reconnect', async () => {
    const server = await issueCertificate({ ca, role: 'node', name: 'node-3' });
    const second = await createAgentApi({ service, journal, tls: { ca: ca.cert, ...server } });
    const agent = new Agent({ connect: { ca: ca.cert, ...certs['node'] } });
    agents.push(agent);
    const c = createAgentClient({
      baseUrl: second.url,
      fetch: async (url, init) => {
        const res = await fetch(url, { ...init, dispatcher: agent });
        return { status: res.status, text: () => res.text(), body: res.body };
      },
    });
    await append('op-c', 'phase', 'Pulling');
    const it = c.events({ operation: 'op-c', follow: true })[Symbol.asyncIterator]();
    assert.equal((await nextEvent(it)).phase, 'Pulling');
    const pending = it.next();
    await second.close();
    await pending.then(
      (r) => {
        assert.equal(r.done, true);
      },
      (e: unknown) => {
        assert.ok(isMoltError(e, ErrorCode.AgentUnreachable) && e.retryable);
      },
    );
  });
});
