// SPDX-License-Identifier: Apache-2.0
// The client's mapping of answers to values and MoltErrors, with a scripted fetch (the injected port).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ErrorCode, isMoltError } from '../core/errors.ts';
import { createAgentClient, type AgentRequest, type AgentResponse } from './agent-client.ts';

function answer(status: number, text: string): AgentResponse {
  return {
    status,
    text: () => Promise.resolve(text),
    body: (async function* () {
      await Promise.resolve();
      yield new TextEncoder().encode(text);
    })(),
  };
}

function clientAnswering(res: AgentResponse | Error) {
  const calls: { url: string; init: AgentRequest }[] = [];
  const client = createAgentClient({
    baseUrl: 'https://agent:9443/',
    fetch: (url, init) => {
      calls.push({ url, init });
      return res instanceof Error ? Promise.reject(res) : Promise.resolve(res);
    },
  });
  return { client, calls };
}

describe('agent client', () => {
  it('posts JSON bodies and returns the accepted operation', async () => {
    const { client, calls } = clientAnswering(answer(202, '{"operationId":"op-1"}'));
    assert.deepEqual(await client.upgrade({ image: 'reg/os:1', preserve: false }), {
      operationId: 'op-1',
    });
    const [call] = calls;
    assert.ok(call);
    assert.equal(call.url, 'https://agent:9443/v1/upgrade');
    assert.equal(call.init.method, 'POST');
    assert.equal(typeof call.init.body, 'string');
    assert.deepEqual(JSON.parse(call.init.body as string), { image: 'reg/os:1', preserve: false });
  });

  it('turns an error body into a MoltError with the agent’s code, hint and details', async () => {
    const body = {
      code: 'MOLT_AGENT_BUSY',
      message: 'busy with op-3',
      hint: 'wait',
      details: { operationId: 'op-3' },
    };
    const { client } = clientAnswering(answer(409, JSON.stringify(body)));
    await assert.rejects(client.reboot(), (e) => {
      assert.ok(isMoltError(e, ErrorCode.AgentBusy));
      assert.equal(e.message, 'busy with op-3');
      assert.equal(e.hint, 'wait');
      assert.deepEqual(e.details, { operationId: 'op-3' });
      return true;
    });
  });

  it('calls an answer that is not molt’s MOLT_AGENT_PROTOCOL', async () => {
    await assert.rejects(clientAnswering(answer(502, '<html>bad gateway')).client.status(), (e) =>
      isMoltError(e, ErrorCode.AgentProtocol),
    );
    await assert.rejects(
      clientAnswering(answer(200, '{"node":1}')).client.status(),
      (e) => isMoltError(e, ErrorCode.AgentProtocol) && /node/.test(e.message),
    );
  });

  it('takes a bare 503 — an agent closing its API to reboot — as unreachable, not as garbage', async () => {
    // What Fastify answers a request that arrives while the server closes (return503OnClosing):
    // a follower of a reboot, or the operator's poll, must wait the reboot out, not give up or
    // pause a rollout over an agent that "answers garbage".
    const closing =
      '{"error":"Service Unavailable","message":"Service Unavailable","statusCode":503}';
    for (const call of [
      (c: ReturnType<typeof createAgentClient>) => c.status(),
      async (c: ReturnType<typeof createAgentClient>) => {
        for await (const e of c.events({ follow: true })) assert.fail(`an event: ${e.kind}`);
      },
    ])
      await assert.rejects(
        call(clientAnswering(answer(503, closing)).client),
        (e) => isMoltError(e, ErrorCode.AgentUnreachable) && e.retryable && /503/.test(e.message),
      );
  });

  it('keeps a refusal at a connection cap (429) as the agent’s own, retryable error', async () => {
    const body = JSON.stringify({
      code: ErrorCode.ConnectionLimit,
      message: 'node-2 (role node) already holds 8 open event streams on this listener',
    });
    await assert.rejects(
      clientAnswering(answer(429, body)).client.status(),
      (e) => isMoltError(e, ErrorCode.ConnectionLimit) && e.retryable && /node-2/.test(e.message),
    );
  });

  it('makes a transport failure a retryable MOLT_AGENT_UNREACHABLE', async () => {
    const refused = Object.assign(new TypeError('fetch failed'), {
      cause: Object.assign(new Error('connect'), { code: 'ECONNREFUSED' }),
    });
    await assert.rejects(
      clientAnswering(refused).client.status(),
      (e) =>
        isMoltError(e, ErrorCode.AgentUnreachable) && e.retryable && /ECONNREFUSED/.test(e.message),
    );
  });

  it('streams events with query and Last-Event-ID, and ends a stream on an error frame', async () => {
    const sse =
      'id: op-1:4\nevent: phase\ndata: {"operationId":"op-1","seq":4,"time":"t","kind":"phase","phase":"Draining","status":"started","message":"m"}\n\n' +
      'event: stream-error\ndata: {"code":"MOLT_INTERNAL","message":"journal unreadable"}\n\n';
    const { client, calls } = clientAnswering(answer(200, sse));
    const seen: number[] = [];
    await assert.rejects(
      (async () => {
        for await (const e of client.events({
          operation: 'op 1',
          follow: true,
          lastEventId: 'op-1:3',
        }))
          seen.push(e.seq);
      })(),
      (e) => isMoltError(e, ErrorCode.Internal) && e.message === 'journal unreadable',
    );
    assert.deepEqual(seen, [4]);
    const [call] = calls;
    assert.ok(call);
    assert.equal(call.url, 'https://agent:9443/v1/events?operation=op%201&follow=true');
    assert.equal(call.init.headers['last-event-id'], 'op-1:3');
  });
});
