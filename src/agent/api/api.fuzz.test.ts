// SPDX-License-Identifier: Apache-2.0
// Fuzz target (docs/patterns/testing.md): the agent API's request bodies, query strings and
// Last-Event-ID, in process. Any request is answered with a status below 500 and, when refused,
// a protocol ErrorBody with a known code; no route ever reaches the 500 "bug" path.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { ErrorCode } from '../../core/errors.ts';
import { AgentRoutes, ErrorBody } from '../../protocol/agent.ts';
import { accepted, fuzzParameters, fuzzText, outcome } from '../../testkit/fuzz.ts';
import { fuzzRequest, injectOptions } from '../../testkit/fuzz-http.ts';
import { createMemoryJournalStore } from '../ports/journal-store.fake.ts';
import { buildAgentApp } from './routes.ts';
import { createFakeAgentService } from './service.fake.ts';
import { parseLastEventId } from './validation.ts';

const codes = new Set<string>(Object.values(ErrorCode).filter((c) => c !== ErrorCode.Internal));
const bodies = [
  { image: 'reg/os:2.0.0', preserve: false, stage: true, force: false },
  { force: true },
  {},
];

describe('fuzz: the agent API', () => {
  it('answers any request below 500, refusals as an ErrorBody with a known code', async () => {
    const internal: unknown[] = [];
    const app = buildAgentApp({
      service: createFakeAgentService(),
      journal: createMemoryJournalStore(),
      identify: () => ({ name: 'admin-1', role: 'admin' }),
      onInternalError: (e) => internal.push(e),
    });
    await fc.assert(
      fc.asyncProperty(
        fuzzRequest([...Object.values(AgentRoutes), '/v1/operations/op-1'], bodies),
        async (req) => {
          // A follow=1 stream would stay open: the fake has no operation to end it, so don't follow.
          const url = req.url.replace(/follow=[^&]*/g, 'follow=0');
          const res = await app.inject(injectOptions(req, { url }));
          assert.deepEqual(internal, [], `${req.method} ${url} reached the 500 path`);
          assert.ok(res.statusCode < 500, `${req.method} ${url}: ${res.statusCode} ${res.body}`);
          if (res.statusCode < 400) return;
          const body = ErrorBody.parse(res.json());
          assert.ok(codes.has(body.code), body.code);
        },
      ),
      fuzzParameters(300),
    );
    await app.close();
  });

  it('Last-Event-ID is a cursor or MOLT_BAD_INPUT', () => {
    const ids = ['op-1:3', 'a:b:7', 'op:999999999999999', ':1', 'op-1:', 'op-1:1234567890123456'];
    fc.assert(
      fc.property(
        fc.oneof(fuzzText(ids, 80), fc.array(fuzzText(ids, 40), { maxLength: 2 })),
        (v) => {
          const r = outcome(() => parseLastEventId(v), 'parseLastEventId');
          if (!accepted(r, ErrorCode.BadInput) || r.value === undefined) return;
          assert.ok(Number.isSafeInteger(r.value.seq) && r.value.seq >= 0);
          assert.deepEqual(parseLastEventId(`${r.value.operationId}:${r.value.seq}`), r.value);
        },
      ),
      fuzzParameters(1_000),
    );
  });
});
