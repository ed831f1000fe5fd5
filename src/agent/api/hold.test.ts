// SPDX-License-Identifier: Apache-2.0
// The hold routes (docs/adr/0004 §11): every role reads the hold, only operator and admin
// certificates set or clear it, and the hold is recorded as set by the caller's certificate.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ErrorCode, MoltError } from '../../core/errors.ts';
import { ErrorBody, type Role } from '../../protocol/agent.ts';
import { HoldAnswer } from '../../protocol/agent-hold.ts';
import { createMemoryJournalStore } from '../ports/journal-store.fake.ts';
import { buildAgentApp } from './routes.ts';
import { createFakeAgentService } from './service.fake.ts';

function setup(role: Role) {
  const service = createFakeAgentService();
  const app = buildAgentApp({
    service,
    journal: createMemoryJournalStore(),
    identify: () => ({ name: `${role}-1`, role }),
  });
  return { app, service };
}

const hold = { reason: 'disk swap', for: '2h' };

describe('agent API: the hold', () => {
  for (const role of ['operator', 'admin'] as const) {
    it(`lets an ${role} set the hold, recorded as set by its certificate, then clear it`, async () => {
      const { app, service } = setup(role);
      const set = await app.inject({ method: 'POST', url: '/v1/hold', payload: hold });
      assert.equal(set.statusCode, 200, set.body);
      const answer = HoldAnswer.parse(set.json());
      assert.equal(answer.hold?.reason, 'disk swap');
      assert.deepEqual(answer.hold.setBy, { name: `${role}-1`, role });
      assert.deepEqual(
        HoldAnswer.parse((await app.inject({ method: 'GET', url: '/v1/hold' })).json()),
        answer,
      );
      const cleared = await app.inject({ method: 'DELETE', url: '/v1/hold' });
      assert.equal(cleared.statusCode, 200, cleared.body);
      assert.deepEqual(cleared.json(), { hold: null, released: answer.hold });
      const again = await app.inject({ method: 'DELETE', url: '/v1/hold' });
      assert.deepEqual(again.json(), { hold: null, released: null });
      assert.equal(service.held, null);
    });
  }

  it('lets a node certificate read the hold, in its own route and in the status', async () => {
    const { app, service } = setup('node');
    service.held = {
      reason: 'audit',
      until: '2099-01-01T00:00:00.000Z',
      setBy: { name: 'root', role: 'admin' },
      setAt: '2026-01-01T00:00:00.000Z',
    };
    const res = await app.inject({ method: 'GET', url: '/v1/hold' });
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), { hold: service.held });
    const status = await app.inject({ method: 'GET', url: '/v1/status' });
    assert.deepEqual(status.json<{ hold: unknown }>().hold, service.held);
  });

  it('forbids a node certificate to set or clear the hold, or to try any other method', async () => {
    const { app, service } = setup('node');
    for (const method of ['POST', 'DELETE', 'PUT', 'PATCH'] as const) {
      const res = await app.inject({ method, url: '/v1/hold', payload: hold });
      assert.equal(res.statusCode, 403, `${method}: ${res.body}`);
      assert.equal(ErrorBody.parse(res.json()).code, ErrorCode.Forbidden);
      assert.match(res.json<ErrorBody>().message, /node-1 \(role node\) may not call \/v1\/hold/);
    }
    assert.deepEqual(service.holdRequests, []);
  });

  it('refuses a hold request that is not well formed with 400 MOLT_BAD_INPUT', async () => {
    const { app, service } = setup('operator');
    for (const payload of [
      {},
      { reason: 'x' },
      { reason: 'x', for: '1h', until: '2099-01-01T00:00:00Z' },
      { reason: 'x', for: 'soon' },
      { reason: ' ', for: '1h' },
      { reason: 'x', for: '1h', force: true },
      { reason: 'x', until: '2020-01-01T00:00:00Z' },
    ]) {
      const res = await app.inject({ method: 'POST', url: '/v1/hold', payload });
      assert.equal(res.statusCode, 400, JSON.stringify(payload));
      assert.equal(res.json<ErrorBody>().code, ErrorCode.BadInput);
    }
    const extra = await app.inject({ method: 'DELETE', url: '/v1/hold', payload: { all: true } });
    assert.equal(extra.statusCode, 400);
    assert.equal(service.held, null);
  });

  it('answers an upgrade refused for the hold with 409 MOLT_MACHINE_HELD and the hold', async () => {
    const { app, service } = setup('operator');
    const held = { reason: 'disk swap', until: '2099-01-01T00:00:00.000Z' };
    service.failNext = new MoltError(ErrorCode.MachineHeld, 'node-1 is held', {
      hint: 'release it',
      details: { hold: held },
    });
    const res = await app.inject({
      method: 'POST',
      url: '/v1/upgrade',
      payload: { image: 'r/o:1' },
    });
    assert.equal(res.statusCode, 409);
    assert.deepEqual(res.json(), {
      code: 'MOLT_MACHINE_HELD',
      message: 'node-1 is held',
      hint: 'release it',
      details: { hold: held },
    });
  });
});
