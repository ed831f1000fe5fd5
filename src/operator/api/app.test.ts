// SPDX-License-Identifier: Apache-2.0
// The operator API's routes on inject() with the in-memory store and an identity from a test header.
import assert from 'node:assert/strict';
import { beforeEach, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { ErrorCode, MoltError } from '../../core/errors.ts';
import { parseSse } from '../../protocol/sse.ts';
import type { MemoryOperatorStore } from '../adapters/memory-store/operator-store.ts';
import { apiFixture, fixtureNow, idleStatus } from '../../testkit/operator-api-fixture.ts';
import type { HoldView } from '../../protocol/agent-hold.ts';
import { buildOperatorApp } from './app.ts';
import type { OperatorApiDeps } from './context.ts';
import type { Identity } from '../../platform/https/identity.ts';
import { countingStore, OperatorMetrics } from './metrics.ts';
import type { MemoryObservationBook } from './observations.ts';

let app: FastifyInstance;
let store: MemoryOperatorStore;
let deps: OperatorApiDeps;
let book: MemoryObservationBook;
const internal: unknown[] = [];

async function build(override: Partial<OperatorApiDeps> = {}): Promise<FastifyInstance> {
  return buildOperatorApp(
    { ...deps, onInternalError: (e) => internal.push(e), ...override },
    {
      identify: (request) => {
        const [role, name] = String(request.headers['x-as'] ?? 'node:n-1').split(':');
        if (role === 'none')
          throw new MoltError(ErrorCode.Forbidden, 'the client certificate names no molt role');
        return { role, name } as Identity;
      },
    },
  );
}

beforeEach(async () => {
  const f = await apiFixture();
  store = f.store;
  deps = f.deps;
  book = f.book;
  internal.length = 0;
  app = await build();
});

type As = 'node' | 'operator' | 'admin';
const get = (url: string, as: As = 'node') =>
  app.inject({ method: 'GET', url, headers: { 'x-as': `${as}:${as}-1` } });
const post = (url: string, body: unknown, as: As = 'operator') =>
  app.inject({
    method: 'POST',
    url,
    headers: { 'x-as': `${as}:${as}-1`, 'content-type': 'application/json' },
    payload: typeof body === 'string' ? body : JSON.stringify(body),
  });

describe('rollouts', () => {
  it('lists rollouts oldest first with machine counts per phase', async () => {
    const res = await get('/v1/rollouts');
    assert.equal(res.statusCode, 200);
    const list = res.json<{ id: string; state: string; counts: Record<string, number> }[]>();
    assert.deepEqual(
      list.map((r) => [r.id, r.state]),
      [
        ['workers-1.0.1', 'Completed'],
        ['cp-1.0.9', 'Halted'],
        ['workers-1.1.0', 'Active'],
        ['cp-1.1.0', 'AwaitingApproval'],
      ],
    );
    assert.deepEqual(list[2]?.counts, {
      total: 4,
      Pending: 2,
      InFlight: 1,
      Succeeded: 1,
      Failed: 0,
      RolledBack: 0,
      Skipped: 0,
      skipped: 0,
    });
  });

  it('shows every machine of the pool with its progress and the planner’s decision', async () => {
    const res = await get('/v1/rollouts/workers-1.1.0');
    assert.equal(res.statusCode, 200);
    const r = res.json<{ machines: { machine: string; phase: string; decision?: unknown }[] }>();
    const byId = new Map(r.machines.map((m) => [m.machine, m]));
    assert.equal(byId.get('w-2')?.phase, 'InFlight');
    assert.equal(byId.get('w-1')?.phase, 'Succeeded');
    // w-2 is in flight and the concurrency limit is 1: the pending ones wait, with the reason.
    const w3 = byId.get('w-3')?.decision as { action: string; reason: { code: string } };
    assert.deepEqual([w3.action, w3.reason.code], ['wait', 'ConcurrencyFull']);
    assert.equal((byId.get('w-2')?.decision as { action: string }).action, 'in-flight');
  });

  it('answers an unknown rollout with 404 MOLT_ROLLOUT_NOT_FOUND', async () => {
    const res = await get('/v1/rollouts/nope');
    assert.equal(res.statusCode, 404);
    assert.equal(res.json<{ code: string }>().code, 'MOLT_ROLLOUT_NOT_FOUND');
  });

  it('pauses an active rollout for an operator, records who, and repeats as a no-op', async () => {
    const res = await post('/v1/rollouts/workers-1.1.0/pause', { reason: 'change freeze' });
    assert.equal(res.statusCode, 200);
    assert.deepEqual(
      [
        res.json<{ changed: boolean }>().changed,
        res.json<{ rollout: { state: string } }>().rollout.state,
      ],
      [true, 'Paused'],
    );
    const last = (await store.history()).at(-1);
    assert.equal(last?.kind, 'rollout-state');
    assert.match(last.message, /paused by operator-1: change freeze/);
    assert.deepEqual(last.data, {
      state: 'Paused',
      from: 'Active',
      by: 'operator-1',
      action: 'pause',
      reason: 'change freeze',
    });
    const again = await post('/v1/rollouts/workers-1.1.0/pause', {});
    assert.equal(again.json<{ changed: boolean }>().changed, false);
    assert.equal((await store.history()).length, 4, 'no second history event');
  });

  it('records the person’s reason for a resume, as for a pause', async () => {
    await post('/v1/rollouts/workers-1.1.0/pause', {});
    const res = await post('/v1/rollouts/workers-1.1.0/resume', { reason: 'freeze over' });
    assert.equal(res.json<{ rollout: { state: string } }>().rollout.state, 'Active');
    const last = (await store.history()).findLast((h) => h.data?.['action'] === 'resume');
    assert.match(last?.message ?? '', /resumed by operator-1: freeze over$/);
    assert.equal(last?.data?.['reason'], 'freeze over');
    const bad = await post('/v1/rollouts/workers-1.1.0/approve', { reason: '' });
    assert.equal(bad.statusCode, 400, 'an empty reason is refused, as for a pause');
  });

  it('rolls a halted rollout back fleet-wide once, refusing running rollouts and rollouts without a previous release', async () => {
    const res = await post('/v1/rollouts/cp-1.0.9/rollback', { reason: 'etcd latency' });
    assert.equal(res.statusCode, 200, res.body);
    const { rollout, changed } = res.json<{
      rollout: { id: string; state: string; target: { version: string } };
      changed: boolean;
    }>();
    assert.deepEqual(
      [rollout.id, rollout.state, rollout.target.version, changed],
      ['cp-1.0.9-rollback', 'Active', '1.0.8', true],
    );
    const said = (await store.history()).slice(-3).map((e) => e.message);
    assert.match(said[0] ?? '', /cp-1\.0\.9 rolled back by operator-1 to 1\.0\.8: etcd latency/);
    assert.match(
      said[1] ?? '',
      /^release 1\.0\.9 blocked for pool cp: rolled back by cp-1\.0\.9-rollback \(to 1\.0\.8\): etcd latency \(offer it again: molt releases unblock 1\.0\.9 --pool cp\)$/,
    );
    assert.equal(
      said[2],
      'rollout cp-1.0.9 rolled back: rolled back by cp-1.0.9-rollback (to 1.0.8): etcd latency',
    );
    const stored = await store.read();
    assert.equal(stored.rollouts.find((r) => r.id === 'cp-1.0.9')?.state, 'RolledBack');
    assert.deepEqual(
      stored.blocks.filter((b) => b.pool === 'cp').map((b) => [b.version, b.by, b.rollout]),
      [['1.0.9', 'operator-1', 'cp-1.0.9']],
    );
    const again = await post('/v1/rollouts/cp-1.0.9/rollback', {});
    assert.equal(again.statusCode, 200, 'asked again: the same rollback');
    assert.deepEqual(
      [
        again.json<{ rollout: { id: string } }>().rollout.id,
        again.json<{ changed: boolean }>().changed,
      ],
      ['cp-1.0.9-rollback', false],
    );
    const running = await post('/v1/rollouts/workers-1.1.0/rollback', {});
    assert.equal(running.statusCode, 409);
    assert.match(running.body, /MOLT_ROLLOUT_STATE.*pause it first/);
    const noFrom = await post('/v1/rollouts/workers-1.0.1/rollback', {});
    assert.equal(noFrom.statusCode, 409);
    assert.equal((await post('/v1/rollouts/cp-1.0.9/rollback', {}, 'node')).statusCode, 403);
  });

  it('refuses writes to a node certificate with 403 MOLT_FORBIDDEN', async () => {
    const res = await post('/v1/rollouts/workers-1.1.0/pause', {}, 'node');
    assert.equal(res.statusCode, 403);
    assert.equal(res.json<{ code: string }>().code, 'MOLT_FORBIDDEN');
    assert.equal(
      (await store.read()).rollouts.find((r) => r.id === 'workers-1.1.0')?.state,
      'Active',
    );
  });

  it('approves a rollout awaiting approval, and refuses approving a paused one with 409', async () => {
    const ok = await post('/v1/rollouts/cp-1.1.0/approve', {});
    assert.equal(ok.json<{ rollout: { state: string } }>().rollout.state, 'Active');
    await post('/v1/rollouts/workers-1.1.0/pause', {});
    const res = await post('/v1/rollouts/workers-1.1.0/approve', {});
    assert.equal(res.statusCode, 409);
    const body = res.json<{ code: string; hint: string; details: unknown }>();
    assert.equal(body.code, 'MOLT_ROLLOUT_STATE');
    assert.match(body.hint, /resume/);
    assert.deepEqual(body.details, {
      rollout: 'workers-1.1.0',
      state: 'Paused',
      action: 'approve',
    });
  });

  it('resumes a halted rollout only for an admin with force, retrying its failed machines', async () => {
    const plain = await post('/v1/rollouts/cp-1.0.9/resume', {});
    assert.equal(plain.statusCode, 409);
    assert.match(plain.json<{ hint: string }>().hint, /--force/);
    const operator = await post('/v1/rollouts/cp-1.0.9/resume', { force: true });
    assert.equal(operator.statusCode, 403);
    const admin = await post('/v1/rollouts/cp-1.0.9/resume', { force: true }, 'admin');
    assert.equal(admin.statusCode, 200);
    const stored = (await store.read()).rollouts.find((r) => r.id === 'cp-1.0.9');
    assert.equal(stored?.state, 'Active');
    assert.deepEqual(stored.machines['cp-1'], { phase: 'Pending' });
    assert.equal(stored.machines['cp-2']?.phase, 'Succeeded');
    assert.deepEqual((await store.history()).at(-1)?.data?.['reset'], ['cp-1']);
  });

  it('never changes a completed rollout', async () => {
    const res = await post('/v1/rollouts/workers-1.0.1/resume', {});
    assert.equal(res.statusCode, 409);
    assert.match(res.json<{ hint: string }>().hint, /final/);
  });

  it('answers unknown or ill-typed fields and bad JSON with 400 MOLT_BAD_INPUT, never a stack', async () => {
    const unknown = await post('/v1/rollouts/workers-1.1.0/pause', { resaon: 'typo' });
    assert.equal(unknown.statusCode, 400);
    assert.deepEqual(unknown.json(), {
      code: 'MOLT_BAD_INPUT',
      message: 'invalid pause request: resaon: unknown field',
    });
    const typed = await post('/v1/rollouts/cp-1.0.9/resume', { force: 'yes' }, 'admin');
    assert.equal(typed.statusCode, 400);
    assert.match(typed.json<{ message: string }>().message, /force/);
    const garbage = await post('/v1/rollouts/cp-1.0.9/resume', '{not json', 'admin');
    assert.equal(garbage.statusCode, 400);
    assert.equal(garbage.json<{ code: string }>().code, 'MOLT_BAD_INPUT');
    assert.doesNotMatch(garbage.body, /at .*\.ts/);
    const query = await get('/v1/history?limit=0');
    assert.equal(query.statusCode, 400);
    assert.match(query.json<{ message: string }>().message, /^invalid history query: limit/);
  });
});

describe('machines', () => {
  const del = (url: string, as: As = 'operator') =>
    app.inject({ method: 'DELETE', url, headers: { 'x-as': `${as}:${as}-1` } });
  const w9 = {
    id: 'w-9',
    endpoint: 'https://10.0.0.9:7443',
    pool: 'workers',
    labels: { zone: 'b' },
  };

  it('registers a machine for an operator, and lets a machine register only itself', async () => {
    const res = await post('/v1/machines', w9);
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json<{ id: string; registered: boolean; role: string }>(), {
      ...w9,
      role: 'worker',
      registered: true,
    });
    assert.ok((await store.read()).machines.some((m) => m.id === 'w-9' && m.registered === true));
    assert.match(
      (await store.history()).at(-1)?.message ?? '',
      /w-9 registered by operator-1 in pool workers/,
    );
    // Nodes register themselves only as the config's rules allow, at an agent presenting their
    // certificate (self-registration.test.ts); here a rule and a probe that always passes.
    const probed: string[] = [];
    app = await build({
      selfRegistration: {
        rules: [{ nodes: ['w-*'], pool: 'workers', role: 'worker', labels: { zone: ['*'] } }],
        probe: (m) => Promise.resolve(probed.push(m.id)),
      },
    });
    const self = await app.inject({
      method: 'POST',
      url: '/v1/machines',
      headers: { 'x-as': 'node:w-10', 'content-type': 'application/json' },
      payload: JSON.stringify({ ...w9, id: 'w-10' }),
    });
    assert.equal(self.statusCode, 200, self.body);
    assert.deepEqual(probed, ['w-10'], 'its agent was checked');
    const other = await app.inject({
      method: 'POST',
      url: '/v1/machines',
      headers: { 'x-as': 'node:w-10', 'content-type': 'application/json' },
      payload: JSON.stringify({ ...w9, id: 'w-11' }),
    });
    assert.equal(other.statusCode, 403);
    assert.match(other.body, /MOLT_FORBIDDEN.*may register only itself/);
  });

  it('refuses a registration to an unknown pool, over a fleet-file machine, or with a bad endpoint', async () => {
    const pool = await post('/v1/machines', { ...w9, pool: 'gpu' });
    assert.equal(pool.statusCode, 400, pool.body);
    assert.match(pool.body, /MOLT_UNKNOWN_POOL/);
    const fileMachine = await post('/v1/machines', { ...w9, id: 'w-1' });
    assert.equal(fileMachine.statusCode, 409);
    assert.match(fileMachine.body, /defined in the fleet file/);
    const http = await post('/v1/machines', { ...w9, endpoint: 'http://10.0.0.9:7443' });
    assert.equal(http.statusCode, 400);
    assert.match(http.body, /MOLT_BAD_INPUT.*endpoint/);
  });

  it('deregisters only registered machines, never one upgrading', async () => {
    await post('/v1/machines', w9);
    const res = await del('/v1/machines/w-9');
    assert.deepEqual(res.json(), { id: 'w-9', removed: true });
    assert.deepEqual((await del('/v1/machines/w-9')).json(), { id: 'w-9', removed: false });
    const file = await del('/v1/machines/w-1');
    assert.equal(file.statusCode, 409);
    assert.equal((await del('/v1/machines/w-9', 'node')).statusCode, 403);
  });

  it('lists the inventory with the last observation of each machine', async () => {
    const res = await get('/v1/machines');
    const list = res.json<{ id: string; observed?: Record<string, unknown> }[]>();
    assert.equal(list.length, 6);
    const w1 = list.find((m) => m.id === 'w-1')?.observed;
    assert.deepEqual(
      [w1?.['reachable'], w1?.['available'], w1?.['version'], w1?.['phase']],
      [true, true, '1.0.0', 'Idle'],
    );
    const w2 = list.find((m) => m.id === 'w-2')?.observed;
    assert.deepEqual(
      [w2?.['reachable'], w2?.['error']],
      [false, 'MOLT_AGENT_UNREACHABLE: rebooting'],
    );
    assert.equal(list.find((m) => m.id === 'cp-1')?.observed, undefined);
  });

  it('holds a machine for a duration and releases it, each recorded in the history', async () => {
    const res = await post('/v1/machines/w-3/hold', { reason: 'disk check', for: '2h' });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json<{ hold: unknown }>().hold, {
      reason: 'disk check',
      until: new Date(fixtureNow + 2 * 3_600_000).toISOString(),
      by: 'operator-1',
    });
    assert.equal((await store.read()).holds['w-3']?.until, fixtureNow + 2 * 3_600_000);
    assert.match((await store.history()).at(-1)?.message ?? '', /w-3 held by operator-1 until/);
    // The planner sees it: w-3 now waits as Held.
    const plan = (await get('/v1/plan')).json<{
      decisions: { rollout: string; machine: string; reason?: { code: string } }[];
    }>();
    assert.equal(
      plan.decisions.find((d) => d.rollout === 'workers-1.1.0' && d.machine === 'w-3')?.reason
        ?.code,
      'Held',
    );
    const released = await post('/v1/machines/w-3/release', {});
    assert.equal(released.json<{ hold?: unknown }>().hold, undefined);
    assert.deepEqual(released.json<{ released: unknown }>().released, {
      reason: 'disk check',
      until: new Date(fixtureNow + 2 * 3_600_000).toISOString(),
      by: 'operator-1',
    });
    const none = await post('/v1/machines/w-3/release', {});
    assert.equal(none.json<{ released: unknown }>().released, null);
    assert.equal((await store.read()).holds['w-3'], undefined);
    assert.match((await store.history()).at(-1)?.message ?? '', /w-3 released by operator-1/);
  });

  it('pushes a hold and its release to the machine’s agent; the hold stands when the agent is away', async () => {
    const asked: string[] = [];
    const agent = { hold: null as HoldView | null, away: false };
    const agents: NonNullable<OperatorApiDeps['agents']> = {
      status: (m) =>
        agent.away
          ? Promise.reject(new MoltError(ErrorCode.AgentUnreachable, 'rebooting'))
          : Promise.resolve({ ...idleStatus(m.id), hold: agent.hold }),
      setHold: (m, hold) => {
        asked.push(
          `${m.id} hold ${hold.reason} until ${String(hold.until)} for ${hold.onBehalfOf}`,
        );
        agent.hold = {
          reason: hold.reason,
          until: new Date(hold.until).toISOString(),
          setBy: { name: 'molt-operator', role: 'operator' },
          onBehalfOf: hold.onBehalfOf,
          setAt: new Date(fixtureNow).toISOString(),
        };
        return Promise.resolve({ hold: agent.hold });
      },
      clearHold: (m) => {
        asked.push(`${m.id} release`);
        agent.hold = null;
        return Promise.resolve({ hold: null });
      },
    };
    app = await build({ agents });
    assert.equal(
      (await post('/v1/machines/w-3/hold', { reason: 'disk', for: '1h' })).statusCode,
      200,
    );
    assert.deepEqual(asked, [
      `w-3 hold disk until ${String(fixtureNow + 3_600_000)} for operator-1`,
    ]);
    assert.equal((await post('/v1/machines/w-3/release', {})).statusCode, 200);
    assert.deepEqual(asked.slice(1), ['w-3 release']);
    agent.away = true;
    const held = await post('/v1/machines/w-3/hold', { reason: 'disk', for: '1h' });
    assert.equal(held.statusCode, 200, 'the operator’s hold stands; the loop pushes it later');
    assert.equal((await store.read()).holds['w-3']?.reason, 'disk');
    assert.equal(asked.length, 2);
    // A hold set on the agent directly is the person's: a release through the operator keeps it.
    agent.away = false;
    agent.hold = {
      reason: 'bios',
      until: new Date(fixtureNow + 3_600_000).toISOString(),
      setBy: { name: 'root', role: 'admin' },
      setAt: new Date(fixtureNow).toISOString(),
    };
    assert.equal((await post('/v1/machines/w-3/release', {})).statusCode, 200);
    assert.equal(asked.length, 2, 'the direct hold was left alone');
  });

  it('holds until a time, and refuses a past time, both until and for, or an unknown machine', async () => {
    const until = '2026-11-25T06:00:00Z';
    const ok = await post('/v1/machines/w-4/hold', { reason: 'r', until });
    assert.equal(ok.json<{ hold: { until: string } }>().hold.until, '2026-11-25T06:00:00.000Z');
    const past = await post('/v1/machines/w-4/hold', {
      reason: 'r',
      until: '2026-11-24T09:00:00Z',
    });
    assert.equal(past.statusCode, 400);
    assert.match(past.json<{ message: string }>().message, /not in the future/);
    const both = await post('/v1/machines/w-4/hold', { reason: 'r', until, for: '1h' });
    assert.equal(both.statusCode, 400);
    assert.match(both.json<{ message: string }>().message, /exactly one of until and for/);
    const bad = await post('/v1/machines/w-4/hold', { reason: 'r', for: 'soon' });
    assert.match(bad.json<{ message: string }>().message, /for: must be a duration/);
    const unknown = await post('/v1/machines/nope/hold', { reason: 'r', for: '1h' });
    assert.equal(unknown.statusCode, 404);
    assert.equal(unknown.json<{ code: string }>().code, 'MOLT_UNKNOWN_MACHINE');
    const typo = await post('/v1/machines/w4/hold', { reason: 'r', for: '1h' });
    assert.match(
      typo.json<{ message: string }>().message,
      /^the operator manages no machine w4; did you mean w-4\?$/,
    );
    const node = await post('/v1/machines/w-4/release', {}, 'node');
    assert.equal(node.statusCode, 403);
  });
});

describe('history, events, plan, metrics', () => {
  it('pages the history after a seq, optionally of one rollout', async () => {
    const all = (await get('/v1/history')).json<{ seq: number; at: string }[]>();
    assert.deepEqual(
      all.map((e) => e.seq),
      [1, 2, 3],
    );
    assert.equal(all[0]?.at, new Date(fixtureNow - 3_600_000).toISOString());
    const page = (await get('/v1/history?after=1&limit=1')).json<{ seq: number }[]>();
    assert.deepEqual(
      page.map((e) => e.seq),
      [2],
    );
    const one = (await get('/v1/history?rollout=workers-1.1.0')).json<{ seq: number }[]>();
    assert.deepEqual(
      one.map((e) => e.seq),
      [1, 3],
    );
  });

  it('streams the history as SSE, resuming after Last-Event-ID', async () => {
    const res = await app.inject({
      method: 'GET',
      url: '/v1/events?rollout=workers-1.1.0',
      headers: { 'x-as': 'node:n', 'last-event-id': '1' },
    });
    assert.equal(res.statusCode, 200);
    assert.match(String(res.headers['content-type']), /text\/event-stream/);
    const frames = [];
    for await (const f of parseSse(
      (async function* () {
        yield await Promise.resolve(res.rawPayload);
      })(),
    ))
      frames.push(f);
    assert.deepEqual(
      frames.map((f) => [f.id, f.event]),
      [['3', 'machine-start']],
    );
    assert.equal((JSON.parse(frames[0]?.data ?? '{}') as { machine: string }).machine, 'w-2');
    const bad = await app.inject({
      method: 'GET',
      url: '/v1/events',
      headers: { 'last-event-id': 'x' },
    });
    assert.equal(bad.statusCode, 400);
  });

  it('plans on the stored state and the last observations, with every refusal on explain', async () => {
    const res = await get('/v1/plan?explain=true');
    assert.equal(res.statusCode, 200);
    const plan = res.json<{
      leader: boolean;
      observed: { machines: number; of: number };
      decisions: {
        rollout: string;
        machine: string;
        action: string;
        refusals?: { code: string }[];
      }[];
      rollouts: { rollout: string; verdict: string }[];
    }>();
    assert.equal(plan.leader, true);
    assert.deepEqual(plan.observed.machines, 4);
    assert.equal(plan.observed.of, 6);
    const w3 = plan.decisions.find((d) => d.rollout === 'workers-1.1.0' && d.machine === 'w-3');
    assert.equal(w3?.action, 'wait');
    assert.ok(w3.refusals?.some((r) => r.code === 'ConcurrencyFull'));
    const cp = plan.decisions.find((d) => d.rollout === 'cp-1.1.0' && d.machine === 'cp-1');
    assert.equal(cp?.action, 'wait');
  });

  it('marks a waiting machine its rollout staged ahead while its agent still holds it staged', async () => {
    await store.updateRollout('workers-1.1.0', (r) => ({
      ...r,
      staged: {
        'w-3': { operationId: 'op-s', at: fixtureNow },
        'w-4': { operationId: 'op-gone', at: fixtureNow },
      },
    }));
    const staged = idleStatus('w-3');
    book.set('w-3', {
      at: fixtureNow,
      status: {
        ...staged,
        phase: 'Staged',
        operation: { id: 'op-s', kind: 'upgrade', phase: 'Staged', startedAt: 'x' },
      },
    });
    const plan = (await get('/v1/plan')).json<{
      decisions: { rollout: string; machine: string; action: string; staged?: boolean }[];
    }>();
    const of = (machine: string) =>
      plan.decisions.find((d) => d.rollout === 'workers-1.1.0' && d.machine === machine);
    assert.deepEqual([of('w-3')?.action, of('w-3')?.staged], ['wait', true]);
    assert.equal(of('w-4')?.staged, undefined, 'its agent no longer holds what was staged');
  });

  it('exposes Prometheus metrics', async () => {
    deps.metrics.recordStart('workers');
    deps.metrics.recordPass({ startedAt: fixtureNow, durationMs: 250, ok: true });
    const res = await get('/metrics');
    assert.equal(res.statusCode, 200);
    assert.match(String(res.headers['content-type']), /^text\/plain; version=0\.0\.4/);
    const text = res.body;
    assert.match(text, /^# TYPE molt_operator_rollouts gauge$/m);
    assert.match(text, /^molt_operator_rollouts\{state="Active"\} 1$/m);
    assert.match(text, /^molt_operator_rollouts\{state="Halted"\} 1$/m);
    assert.match(
      text,
      /^molt_operator_rollout_machines\{rollout="workers-1.1.0",pool="workers",phase="InFlight"\} 1$/m,
    );
    assert.doesNotMatch(
      text,
      /rollout="workers-1.0.1"/,
      'completed rollouts have no machine series',
    );
    assert.match(text, /^molt_operator_machine_starts_total\{pool="workers"\} 1$/m);
    assert.match(text, /^molt_operator_machine_starts_total\{pool="cp"\} 0$/m);
    assert.match(text, /^molt_operator_last_pass_duration_seconds 0\.25$/m);
    assert.match(text, /^molt_operator_leader 1$/m);
  });
});

describe('the rest of the surface', () => {
  it('serves FleetLock at /fleetlock to any fleet identity, groups = pools', async () => {
    const lock = (group: string, as = 'node:w-1') =>
      app.inject({
        method: 'POST',
        url: '/fleetlock/v1/pre-reboot',
        headers: { 'x-as': as, 'fleet-lock-protocol': 'true' },
        payload: JSON.stringify({ client_params: { id: 'w-1', group } }),
      });
    assert.equal((await lock('workers')).statusCode, 200);
    const unknown = await lock('nope', 'admin:root');
    assert.equal(unknown.statusCode, 400);
    assert.equal(unknown.json<{ kind: string }>().kind, 'unknown_group');
  });

  it('binds FleetLock ids to certificates: a node speaks for itself, in its pool', async () => {
    const call = (step: string, as: string, id: string, group = 'workers') =>
      app.inject({
        method: 'POST',
        url: `/fleetlock/v1/${step}`,
        headers: { 'x-as': as, 'fleet-lock-protocol': 'true' },
        payload: JSON.stringify({ client_params: { id, group } }),
      });
    const holders = async () => (await deps.fleetLock.store.read('workers')).sem?.holders;
    assert.equal((await call('pre-reboot', 'node:w-3', 'w-3')).statusCode, 200);
    // Another node can neither release w-3's slot nor take one under a made-up id.
    for (const [step, id] of [
      ['steady-state', 'w-3'],
      ['pre-reboot', 'made-up'],
    ] as const) {
      const res = await call(step, 'node:w-1', id);
      assert.equal(res.statusCode, 403, `${step} ${id}`);
      assert.equal(res.json<{ kind: string }>().kind, 'forbidden');
    }
    // A node certificate that is no machine of the fleet, or a group that is not its pool.
    assert.equal((await call('pre-reboot', 'node:ghost', 'ghost')).statusCode, 403);
    assert.equal((await call('pre-reboot', 'node:w-1', 'w-1', 'cp')).statusCode, 403);
    assert.equal((await call('pre-reboot', 'operator:operator-1', 'w-1')).statusCode, 403);
    assert.deepEqual(await holders(), ['w-3']);
    // An admin may free any slot: the manual recovery.
    assert.equal((await call('steady-state', 'admin:root', 'w-3')).statusCode, 200);
    assert.deepEqual(await holders(), []);
  });

  it('refuses a certificate without a molt role, even on FleetLock, with 403', async () => {
    for (const url of ['/v1/rollouts', '/fleetlock/v1/pre-reboot']) {
      const res = await app.inject({
        method: url.startsWith('/v1') ? 'GET' : 'POST',
        url,
        headers: { 'x-as': 'none:x' },
      });
      assert.equal(res.statusCode, 403, url);
      assert.equal(res.json<{ code: string }>().code, 'MOLT_FORBIDDEN');
    }
  });

  it('answers an unknown route with 404 and a bug with 500 MOLT_INTERNAL without its stack', async () => {
    assert.equal((await get('/v1/nothing')).statusCode, 404);
    const broken = await build({
      store: {
        ...countingStore(store, new OperatorMetrics()),
        read: () => Promise.reject(new Error('boom at secret.ts:1')),
      },
    });
    const res = await broken.inject({
      method: 'GET',
      url: '/v1/rollouts',
      headers: { 'x-as': 'node:n' },
    });
    assert.equal(res.statusCode, 500);
    assert.equal(res.json<{ code: string }>().code, 'MOLT_INTERNAL');
    assert.doesNotMatch(res.body, /boom|secret/);
    assert.equal(internal.length, 1);
  });
});
