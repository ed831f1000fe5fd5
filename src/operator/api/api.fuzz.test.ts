// SPDX-License-Identifier: Apache-2.0
// Fuzz targets (docs/patterns/testing.md): the operator API's request bodies and queries (its zod
// schemas, as parseInput reads them) and FleetLock bodies (any text, as Zincati's spec allows),
// in process: a refusal is MOLT_BAD_INPUT or a FleetLock refusal, never the 500 "bug" path.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import Fastify from 'fastify';
import { ErrorCode } from '../../core/errors.ts';
import { parseInput } from '../../platform/https/input.ts';
import * as operator from '../../protocol/operator.ts';
import { MemoryFleetLockStore } from '../adapters/memory-fleetlock/store.ts';
import { accepted, fuzzJson, fuzzParameters, outcome } from '../../testkit/fuzz.ts';
import { fuzzRequest, injectOptions } from '../../testkit/fuzz-http.ts';
import { registerFleetLock } from './fleetlock.ts';

const schemas = [
  operator.PauseRequestBody,
  operator.ResumeRequestBody,
  operator.ApproveRequestBody,
  operator.FleetRollbackRequestBody,
  operator.HoldRequestBody,
  operator.ReleaseRequestBody,
  operator.RegisterMachineBody,
  operator.HistoryQuery,
  operator.EventsQuery,
  operator.PlanQuery,
];
const samples = [
  { reason: 'maintenance' },
  { force: true },
  { reason: 'x', until: '2026-11-24T00:00:00Z' },
  {
    id: 'w-1',
    endpoint: 'https://127.0.0.1:7443',
    pool: 'workers',
    role: 'worker',
    labels: { a: 'b' },
  },
  { limit: '5', explain: '1', rollout: 'r1' },
];

describe('fuzz: the operator API', () => {
  it('every request schema reads any JSON into a value or MOLT_BAD_INPUT', () => {
    fc.assert(
      fc.property(fc.constantFrom(...schemas), fuzzJson(samples), (schema, json) => {
        const r = outcome(() => parseInput(schema, json, 'request'), 'parseInput');
        if (accepted(r, ErrorCode.BadInput)) assert.ok(outcome(() => JSON.stringify(r.value)).ok);
      }),
      fuzzParameters(2_000),
    );
  });

  it('FleetLock answers any body below 500 and never reaches its internal-error path', async () => {
    const internal: unknown[] = [];
    const app = Fastify({ logger: false });
    await registerFleetLock(app, {
      store: new MemoryFleetLockStore(),
      groups: (g) => (g === 'default' || g === 'workers' ? { slots: 1 } : undefined),
      now: () => Date.parse('2026-11-24T02:30:00Z'),
      onInternalError: (e) => internal.push(e),
    });
    const body = { client_params: { id: 'w-1', group: 'default' } };
    const paths = ['/fleetlock/v1/pre-reboot', '/fleetlock/v1/steady-state'];
    await fc.assert(
      fc.asyncProperty(fuzzRequest(paths, [body]), fc.boolean(), async (req, header) => {
        const headers = header ? { ...req.headers, 'fleet-lock-protocol': 'true' } : req.headers;
        const res = await app.inject(injectOptions(req, { headers }));
        assert.deepEqual(internal, [], `${req.method} ${req.url} reached the 500 path`);
        assert.ok(res.statusCode < 500, `${req.method} ${req.url}: ${res.statusCode} ${res.body}`);
      }),
      fuzzParameters(300),
    );
    await app.close();
  });
});
