// SPDX-License-Identifier: Apache-2.0
// `POST /v1/cancel`: operator and admin certificates may cancel a running pull; a node
// certificate may not; a cancel past the pull is a clear 409.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ErrorCode } from '../../core/errors.ts';
import { ErrorBody, type Role } from '../../protocol/agent.ts';
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

const pulling = {
  id: 'op-7',
  kind: 'upgrade',
  phase: 'Pulling',
  startedAt: '1970-01-01T00:00:00Z',
} as const;

describe('POST /v1/cancel', () => {
  for (const role of ['operator', 'admin'] as const)
    it(`cancels a running pull for an ${role} certificate`, async () => {
      const { app, service } = setup(role);
      service.running = pulling;
      const res = await app.inject({ method: 'POST', url: '/v1/cancel', payload: {} });
      assert.equal(res.statusCode, 202);
      assert.deepEqual(res.json(), { operationId: 'op-7' });
      assert.deepEqual(service.cancelled, [`${role}-1`]);
    });

  it('refuses a node certificate with 403', async () => {
    const { app, service } = setup('node');
    service.running = pulling;
    const res = await app.inject({ method: 'POST', url: '/v1/cancel', payload: {} });
    assert.equal(res.statusCode, 403);
    assert.equal(ErrorBody.parse(res.json()).code, ErrorCode.Forbidden);
    assert.deepEqual(service.cancelled, []);
  });

  it('answers 409 MOLT_NOT_CANCELLABLE past the pull, and 400 for unknown fields', async () => {
    const { app, service } = setup('admin');
    service.running = { ...pulling, phase: 'WritingSlot' };
    const res = await app.inject({ method: 'POST', url: '/v1/cancel', payload: {} });
    assert.equal(res.statusCode, 409);
    assert.equal(ErrorBody.parse(res.json()).code, ErrorCode.NotCancellable);
    const bad = await app.inject({ method: 'POST', url: '/v1/cancel', payload: { force: true } });
    assert.equal(bad.statusCode, 400);
  });
});
