// SPDX-License-Identifier: Apache-2.0
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createMemoryJournalStore } from '../ports/journal-store.fake.ts';
import type { NewAgentEvent } from '../ports/journal-store.ts';
import { AgentEvent, ErrorBody, type Role } from '../../protocol/agent.ts';
import { ErrorCode, MoltError } from '../../core/errors.ts';
import { createFakeAgentService } from './service.fake.ts';
import { buildAgentApp } from './routes.ts';

function setup(role: Role = 'operator') {
  const service = createFakeAgentService();
  const journal = createMemoryJournalStore();
  const internal: unknown[] = [];
  const app = buildAgentApp({
    service,
    journal,
    identify: () => ({ name: `${role}-1`, role }),
    onInternalError: (e) => internal.push(e),
  });
  return { app, service, journal, internal };
}

const event = (operationId: string, kind: AgentEvent['kind'], phase: string): NewAgentEvent => ({
  operationId,
  time: new Date(0).toISOString(),
  kind,
  phase,
  status: kind === 'result' ? 'done' : 'started',
  message: `${phase} ${kind}`,
  ...(kind === 'result' && { result: { result: 'Succeeded' as const } }),
});

/** Parse an SSE body into frames {id, event, data}. */
function frames(body: string): { id?: string; event?: string; data?: string }[] {
  return body
    .split('\n\n')
    .filter((b) => b.includes('data:'))
    .map((block) =>
      Object.fromEntries(
        block.split('\n').map((l) => [l.slice(0, l.indexOf(':')), l.slice(l.indexOf(':') + 2)]),
      ),
    );
}

describe('agent API routes', () => {
  it('serves the status', async () => {
    const { app } = setup('node');
    const res = await app.inject({ method: 'GET', url: '/v1/status' });
    assert.equal(res.statusCode, 200);
    assert.equal(res.json<{ node: string }>().node, 'node-1');
  });

  it('accepts an upgrade from an operator with 202, applying the body defaults', async () => {
    const { app, service } = setup('operator');
    const res = await app.inject({
      method: 'POST',
      url: '/v1/upgrade',
      payload: { image: 'reg/os:2.0.0' },
    });
    assert.equal(res.statusCode, 202);
    assert.deepEqual(res.json(), { operationId: 'op-1' });
    assert.deepEqual(service.submitted[0], {
      kind: 'upgrade',
      identity: { name: 'operator-1', role: 'operator' },
      body: { image: 'reg/os:2.0.0', preserve: true, stage: false, force: false },
    });
  });

  it('accepts a rollback and a reboot without a body', async () => {
    const { app, service } = setup('admin');
    assert.equal((await app.inject({ method: 'POST', url: '/v1/rollback' })).statusCode, 202);
    service.running = undefined;
    assert.equal(
      (await app.inject({ method: 'POST', url: '/v1/reboot', payload: {} })).statusCode,
      202,
    );
    assert.deepEqual(
      service.submitted.map((s) => s.kind),
      ['rollback', 'reboot'],
    );
  });

  it('forbids a node identity to upgrade, before reading the body', async () => {
    const { app, service } = setup('node');
    const res = await app.inject({ method: 'POST', url: '/v1/upgrade', payload: { image: 'x' } });
    assert.equal(res.statusCode, 403);
    const body = ErrorBody.parse(res.json());
    assert.equal(body.code, ErrorCode.Forbidden);
    assert.match(body.message, /node-1 \(role node\) may not call \/v1\/upgrade/);
    assert.equal(service.submitted.length, 0);
  });

  it('requires admin for force', async () => {
    const { app, service } = setup('operator');
    const res = await app.inject({
      method: 'POST',
      url: '/v1/upgrade',
      payload: { image: 'x', force: true },
    });
    assert.equal(res.statusCode, 403);
    assert.equal(res.json<ErrorBody>().code, ErrorCode.Forbidden);
    assert.match(res.json<ErrorBody>().hint ?? '', /admin/);
    assert.equal(service.submitted.length, 0);
    const admin = setup('admin');
    const ok = await admin.app.inject({
      method: 'POST',
      url: '/v1/reboot',
      payload: { force: true },
    });
    assert.equal(ok.statusCode, 202);
  });

  it('answers busy with 409 naming the running operation', async () => {
    const { app, service } = setup();
    service.running = {
      id: 'op-7',
      kind: 'upgrade',
      phase: 'Draining',
      startedAt: new Date(0).toISOString(),
    };
    const res = await app.inject({ method: 'POST', url: '/v1/upgrade', payload: { image: 'x' } });
    assert.equal(res.statusCode, 409);
    const body = ErrorBody.parse(res.json());
    assert.equal(body.code, ErrorCode.AgentBusy);
    assert.deepEqual(body.details, { operationId: 'op-7', kind: 'upgrade', phase: 'Draining' });
  });

  it('maps other coded refusals to their status (no valid slot → 409)', async () => {
    const { app, service } = setup();
    service.failNext = new MoltError(ErrorCode.NoValidSlot, 'slot B holds no valid image');
    const res = await app.inject({ method: 'POST', url: '/v1/rollback', payload: {} });
    assert.equal(res.statusCode, 409);
    assert.equal(res.json<ErrorBody>().code, ErrorCode.NoValidSlot);
  });

  it('rejects unknown fields with 400 naming the field', async () => {
    const { app, service } = setup();
    const res = await app.inject({
      method: 'POST',
      url: '/v1/upgrade',
      payload: { image: 'x', presrve: false },
    });
    assert.equal(res.statusCode, 400);
    const body = ErrorBody.parse(res.json());
    assert.equal(body.code, ErrorCode.BadInput);
    assert.match(body.message, /presrve: unknown field/);
    assert.equal(service.submitted.length, 0);
  });

  it('rejects ill-typed and missing fields with the issue path', async () => {
    const { app } = setup();
    const typed = await app.inject({
      method: 'POST',
      url: '/v1/upgrade',
      payload: { image: 'x', preserve: 'no' },
    });
    assert.equal(typed.statusCode, 400);
    assert.match(typed.json<ErrorBody>().message, /invalid upgrade request: preserve: .*boolean/);
    const missing = await app.inject({ method: 'POST', url: '/v1/upgrade', payload: {} });
    assert.match(missing.json<ErrorBody>().message, /image: /);
    const notObject = await app.inject({ method: 'POST', url: '/v1/reboot', payload: [1] });
    assert.equal(notObject.statusCode, 400);
  });

  it('answers malformed JSON with MOLT_BAD_INPUT', async () => {
    const { app } = setup();
    const res = await app.inject({
      method: 'POST',
      url: '/v1/upgrade',
      headers: { 'content-type': 'application/json' },
      payload: '{"image":',
    });
    assert.equal(res.statusCode, 400);
    assert.equal(res.json<ErrorBody>().code, ErrorCode.BadInput);
  });

  it('answers an unexpected failure with 500 MOLT_INTERNAL and no stack', async () => {
    const { app, service, internal } = setup();
    service.failNext = new TypeError('cannot read properties of undefined');
    const res = await app.inject({ method: 'POST', url: '/v1/reboot', payload: {} });
    assert.equal(res.statusCode, 500);
    const body = ErrorBody.parse(res.json());
    assert.equal(body.code, ErrorCode.Internal);
    assert.doesNotMatch(res.body, /cannot read|at \w+/);
    assert.equal(internal.length, 1);
  });

  it('answers unknown routes with 404 in the error shape', async () => {
    const { app } = setup();
    const res = await app.inject({ method: 'GET', url: '/v2/nothing' });
    assert.equal(res.statusCode, 404);
    assert.equal(ErrorBody.parse(res.json()).code, ErrorCode.BadInput);
  });

  it('lists operations from the journal', async () => {
    const { app, journal } = setup('node');
    await journal.append(event('op-1', 'phase', 'Pulling'));
    await journal.append(event('op-1', 'result', 'Idle'));
    const res = await app.inject({ method: 'GET', url: '/v1/operations' });
    assert.equal(res.statusCode, 200);
    assert.deepEqual(
      res
        .json<{ operationId: string; events: number; result?: unknown }[]>()
        .map((o) => [o.operationId, o.events, o.result]),
      [['op-1', 2, { result: 'Succeeded' }]],
    );
  });

  it('replays an operation as SSE frames with id <op>:<seq>, event <kind>', async () => {
    const { app, journal } = setup('node');
    await journal.append(event('op-1', 'phase', 'Pulling'));
    await journal.append(event('op-2', 'phase', 'Pulling'));
    await journal.append(event('op-1', 'result', 'Idle'));
    const res = await app.inject({ method: 'GET', url: '/v1/events?operation=op-1&follow=true' });
    assert.equal(res.statusCode, 200);
    assert.match(String(res.headers['content-type']), /^text\/event-stream/);
    const got = frames(res.body);
    assert.deepEqual(
      got.map((f) => [f.id, f.event]),
      [
        ['op-1:1', 'phase'],
        ['op-1:2', 'result'],
      ],
    );
    assert.equal(AgentEvent.parse(JSON.parse(got[1]!.data!)).result?.result, 'Succeeded');
  });

  it('resumes after Last-Event-ID', async () => {
    const { app, journal } = setup('node');
    for (const phase of ['Pulling', 'Cordoning', 'Draining'])
      await journal.append(event('op-1', 'phase', phase));
    const res = await app.inject({
      method: 'GET',
      url: '/v1/events',
      headers: { 'last-event-id': 'op-1:2' },
    });
    assert.deepEqual(
      frames(res.body).map((f) => f.id),
      ['op-1:3'],
    );
  });

  it('defaults to the most recent operation', async () => {
    const { app, journal } = setup('node');
    await journal.append(event('op-1', 'phase', 'Pulling'));
    await journal.append(event('op-2', 'phase', 'Pulling'));
    const res = await app.inject({ method: 'GET', url: '/v1/events' });
    assert.deepEqual(
      frames(res.body).map((f) => f.id),
      ['op-2:1'],
    );
  });

  it('answers an unknown operation with 404 MOLT_OPERATION_NOT_FOUND', async () => {
    const { app } = setup('node');
    const res = await app.inject({ method: 'GET', url: '/v1/events?operation=nope&follow=true' });
    assert.equal(res.statusCode, 404);
    assert.equal(res.json<ErrorBody>().code, ErrorCode.OperationNotFound);
  });

  it('rejects unknown query parameters and malformed Last-Event-ID', async () => {
    const { app } = setup('node');
    const q = await app.inject({ method: 'GET', url: '/v1/events?folow=true' });
    assert.equal(q.statusCode, 400);
    assert.match(q.json<ErrorBody>().message, /folow: unknown field/);
    const id = await app.inject({
      method: 'GET',
      url: '/v1/events',
      headers: { 'last-event-id': 'garbage' },
    });
    assert.equal(id.statusCode, 400);
    assert.match(id.json<ErrorBody>().message, /Last-Event-ID/);
  });

  it('serves logs of every operation, with tail', async () => {
    const { app, journal } = setup('node');
    await journal.append(event('op-1', 'phase', 'Pulling'));
    await journal.append(event('op-1', 'result', 'Idle'));
    await journal.append(event('op-2', 'phase', 'Pulling'));
    const all = await app.inject({ method: 'GET', url: '/v1/logs' });
    assert.deepEqual(
      frames(all.body).map((f) => f.id),
      ['op-1:1', 'op-1:2', 'op-2:1'],
    );
    const tail = await app.inject({ method: 'GET', url: '/v1/logs?tail=1' });
    assert.deepEqual(
      frames(tail.body).map((f) => f.id),
      ['op-2:1'],
    );
    const bad = await app.inject({ method: 'GET', url: '/v1/logs?tail=-1' });
    assert.equal(bad.statusCode, 400);
  });
});

describe('agent API streams: failures after the 200', () => {
  it('end the stream with an event: stream-error frame in the ErrorBody shape', async () => {
    const journal = createMemoryJournalStore();
    await journal.append(event('op-1', 'phase', 'Pulling'));
    const broken = { ...journal, events: () => Promise.reject(new Error('disk on fire')) };
    const internal: unknown[] = [];
    const app = buildAgentApp({
      service: createFakeAgentService(),
      journal: broken,
      identify: () => ({ name: 'n', role: 'node' }),
      onInternalError: (e) => internal.push(e),
    });
    const res = await app.inject({ method: 'GET', url: '/v1/logs' });
    assert.equal(res.statusCode, 200);
    const got = frames(res.body);
    assert.equal(got.at(-1)?.event, 'stream-error');
    assert.equal(ErrorBody.parse(JSON.parse(got.at(-1)!.data!)).code, ErrorCode.Internal);
    assert.doesNotMatch(res.body, /disk on fire/);
    assert.equal(internal.length, 1);
  });
});
