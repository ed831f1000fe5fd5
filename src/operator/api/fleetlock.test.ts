// SPDX-License-Identifier: Apache-2.0
// The FleetLock endpoint over a real socket (listen(0) + fetch) on the memory store.
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import Fastify from 'fastify';
import { ErrorCode, MoltError } from '../../core/errors.ts';
import { newSemaphore, type Semaphore } from '../../core/fleetlock/semaphore.ts';
import type { FleetLockRead, FleetLockStore } from '../ports/fleetlock-store.ts';
import {
  MemoryFleetLockBackend,
  MemoryFleetLockStore,
} from '../adapters/memory-fleetlock/store.ts';
import { FleetLockKind, registerFleetLock, type FleetLockOptions } from './fleetlock.ts';
import { fleetLockGroup, type FleetLockGroup } from './fleetlock-groups.ts';

/**
 * The memory store made to race like a networked one: every read answers `latencyMs` late (the
 * value is taken at once, so it can be stale on arrival; without it a request's read and write run
 * back to back and rarely conflict), `beforeWrite` lets a test slip another writer in between a
 * read and a write, and `stats` counts writes attempted and refused as conflicts.
 */
class RacingStore implements FleetLockStore {
  private readonly backend = new MemoryFleetLockBackend();
  private readonly inner = new MemoryFleetLockStore({ backend: this.backend });
  private readonly latencyMs: number | undefined;
  readonly stats = { writes: 0, conflicts: 0 };
  beforeWrite: ((group: string) => void) | undefined;

  constructor(options: { readonly latencyMs?: number } = {}) {
    this.latencyMs = options.latencyMs;
  }

  async read(group: string): Promise<FleetLockRead> {
    const answer = await this.inner.read(group);
    if (this.latencyMs !== undefined) await new Promise((r) => setTimeout(r, this.latencyMs));
    return answer;
  }

  async write(group: string, sem: Semaphore, expectedRevision: string): Promise<boolean> {
    this.beforeWrite?.(group);
    this.stats.writes++;
    const written = await this.inner.write(group, sem, expectedRevision);
    if (!written) this.stats.conflicts++;
    return written;
  }

  /** Overwrite a group's semaphore without a compare (an admin's edit, or a competing writer). */
  put(group: string, sem: Semaphore): void {
    const b = this.backend;
    b.entries.set(group, {
      sem: structuredClone(sem),
      revision: ++b.revision,
    });
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}

interface Served {
  readonly base: string;
  readonly store: RacingStore;
  readonly internal: unknown[];
}

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

/** An operator app with the endpoint under /fleetlock, listening on a free loopback port. */
async function serve(
  groups: Readonly<Record<string, FleetLockGroup>> = { default: { slots: 1 } },
  extra: Partial<FleetLockOptions> = {},
): Promise<Served> {
  const store = extra.store instanceof RacingStore ? extra.store : new RacingStore();
  const internal: unknown[] = [];
  const app = Fastify({ logger: false });
  await registerFleetLock(app, {
    store,
    groups: (g) => groups[g],
    now: () => Date.parse('2026-11-24T02:30:00Z'),
    onInternalError: (e) => internal.push(e),
    ...extra,
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  closers.push(() => app.close());
  const address = app.server.address();
  assert.ok(typeof address === 'object' && address !== null);
  return { base: `http://127.0.0.1:${address.port}/fleetlock/`, store, internal };
}

type Op = 'pre-reboot' | 'steady-state';
const bodyOf = (id: string, group = 'default'): string =>
  JSON.stringify({ client_params: { id, group } });

/** A request as Zincati sends it: POST, the header, a JSON body (no content type unless given). */
async function call(
  s: Served,
  op: Op,
  body: string,
  headers: Record<string, string> = { 'fleet-lock-protocol': 'true' },
): Promise<{ status: number; json: unknown; text: string; headers: Headers }> {
  const res = await fetch(new URL(`v1/${op}`, s.base), {
    method: 'POST',
    headers,
    // Bytes, so fetch adds no Content-Type: Zincati sends none.
    body: new TextEncoder().encode(body),
  });
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, json, text, headers: res.headers };
}

const lockAs = (s: Served, id: string, group?: string) => call(s, 'pre-reboot', bodyOf(id, group));
const unlockAs = (s: Served, id: string, group?: string) =>
  call(s, 'steady-state', bodyOf(id, group));

/** A failure must be `{kind, value}`, both non-empty strings, with a kind from the table. */
function assertError(r: { status: number; json: unknown }, status: number, kind: string): void {
  assert.equal(r.status, status, JSON.stringify(r.json));
  assert.ok(typeof r.json === 'object' && r.json !== null);
  const body = r.json as Record<string, unknown>;
  assert.deepEqual(Object.keys(body).sort(), ['kind', 'value']);
  assert.equal(body['kind'], kind);
  assert.ok(typeof body['value'] === 'string' && body['value'] !== '');
  assert.ok(Object.hasOwn(FleetLockKind, kind));
  assert.equal(FleetLockKind[kind as keyof typeof FleetLockKind], status);
}

const holders = async (s: Served, group = 'default'): Promise<readonly string[]> =>
  (await s.store.read(group)).sem?.holders ?? [];

describe('FleetLock endpoint', () => {
  it('accepts the request exactly as Zincati sends it: pretty JSON, no content type, joined base URL', async () => {
    const s = await serve();
    // Zincati builds the body with serde_json::to_string_pretty and joins "v1/pre-reboot" to base_url.
    const body = JSON.stringify(
      { client_params: { id: '8d3f0c6a2b1e4f5a9c7d6e5f4a3b2c1d', group: 'default' } },
      null,
      2,
    );
    const r = await call(s, 'pre-reboot', body);
    assert.equal(r.status, 200);
    assert.equal(r.text, '');
    assert.deepEqual(await holders(s), ['8d3f0c6a2b1e4f5a9c7d6e5f4a3b2c1d']);
    assert.equal((await call(s, 'steady-state', body)).status, 200);
    assert.deepEqual(await holders(s), []);
  });

  it('accepts a JSON or text content type too', async () => {
    const s = await serve();
    for (const type of ['application/json', 'text/plain;charset=UTF-8']) {
      const r = await call(s, 'pre-reboot', bodyOf('a'), {
        'fleet-lock-protocol': 'true',
        'content-type': type,
      });
      assert.equal(r.status, 200, type);
    }
  });

  it('refuses a request without the fleet-lock-protocol header, on both endpoints', async () => {
    const s = await serve();
    for (const op of ['pre-reboot', 'steady-state'] as const) {
      assertError(await call(s, op, bodyOf('a'), {}), 400, 'missing_header');
      assertError(
        await call(s, op, bodyOf('a'), { 'fleet-lock-protocol': 'false' }),
        400,
        'missing_header',
      );
    }
    assert.deepEqual(await holders(s), []);
  });

  it('refuses a group outside ^[a-zA-Z0-9.-]+$ as a bad request', async () => {
    const s = await serve({ default: { slots: 1 }, a_b: { slots: 1 } });
    for (const group of ['', 'a_b', 'work ers', 'a/b', 'ünï', 'x'.repeat(300)])
      assertError(await lockAs(s, 'a', group), 400, 'bad_request');
  });

  it('refuses an undecodable body or a missing or empty field as bad_request', async () => {
    const s = await serve();
    const bodies = [
      '',
      'not json',
      '{"client_params":',
      'null',
      '[]',
      '{}',
      '{"client_params":{"group":"default"}}',
      '{"client_params":{"id":"","group":"default"}}',
      '{"client_params":{"id":42,"group":"default"}}',
      '{"client_params":{"node_uuid":"abc","group":"default"}}',
      '{"client_params":{"id":"a"}}',
    ];
    for (const body of bodies) {
      const r = await call(s, 'pre-reboot', body);
      assertError(r, 400, 'bad_request');
      assert.ok(!r.text.includes('at '), `no stack trace: ${r.text}`);
    }
  });

  it('refuses a body over the size limit without a stack trace', async () => {
    const s = await serve();
    const r = await call(s, 'pre-reboot', bodyOf('x'.repeat(20_000)));
    assertError(r, 400, 'bad_request');
  });

  it('answers a well-formed group molt does not serve with unknown_group', async () => {
    const s = await serve();
    assertError(await lockAs(s, 'a', 'workers'), 400, 'unknown_group');
    assertError(await unlockAs(s, 'a', 'workers'), 400, 'unknown_group');
  });

  it('locks recursively: the holder locking again gets 200 and still holds one slot', async () => {
    const s = await serve();
    for (let n = 0; n < 3; n++) assert.equal((await lockAs(s, 'node-a')).status, 200);
    assert.deepEqual(await holders(s), ['node-a']);
  });

  it('refuses a second node while the only slot is held, with the spec kind', async () => {
    const s = await serve();
    assert.equal((await lockAs(s, 'node-a')).status, 200);
    const r = await lockAs(s, 'node-b');
    assertError(r, 423, 'failed_lock_semaphore_full');
    assert.match((r.json as { value: string }).value, /semaphore currently full/);
    // Ids are case-sensitive: NODE-A is another node.
    assertError(await lockAs(s, 'NODE-A'), 423, 'failed_lock_semaphore_full');
  });

  it('unlocks idempotently, and the released slot goes to the next node', async () => {
    const s = await serve();
    assert.equal((await unlockAs(s, 'never-held')).status, 200);
    assert.equal((await lockAs(s, 'node-a')).status, 200);
    assert.equal((await unlockAs(s, 'node-b')).status, 200);
    assert.deepEqual(await holders(s), ['node-a'], 'another id cannot release the slot');
    for (let n = 0; n < 3; n++) assert.equal((await unlockAs(s, 'node-a')).status, 200);
    assert.equal((await lockAs(s, 'node-b')).status, 200);
    assert.deepEqual(await holders(s), ['node-b']);
  });

  it('refuses new locks while the window is closed, but unlocks and lets a holder re-lock', async () => {
    let open = true;
    const s = await serve({ default: { slots: 2, windowOpen: () => open } });
    assert.equal((await lockAs(s, 'node-a')).status, 200);
    open = false;
    assertError(await lockAs(s, 'node-b'), 409, 'failed_lock_window_closed');
    // A machine in flight always completes (ADR 0005 §2): its repeated pre-reboot stays 200.
    assert.equal((await lockAs(s, 'node-a')).status, 200);
    assert.equal((await unlockAs(s, 'node-a')).status, 200);
    assert.deepEqual(await holders(s), []);
    open = true;
    assert.equal((await lockAs(s, 'node-b')).status, 200);
  });

  it('asks the window about the injected clock', async () => {
    const seen: number[] = [];
    const s = await serve(
      { default: { slots: 1, windowOpen: (now) => (seen.push(now), true) } },
      { now: () => 1_234 },
    );
    assert.equal((await lockAs(s, 'a')).status, 200);
    assert.deepEqual(seen, [1_234]);
  });

  it('keeps groups apart', async () => {
    const s = await serve({ default: { slots: 1 }, 'workers.eu-1': { slots: 1 } });
    assert.equal((await lockAs(s, 'a', 'default')).status, 200);
    assert.equal((await lockAs(s, 'b', 'workers.eu-1')).status, 200);
    assertError(await lockAs(s, 'c', 'workers.eu-1'), 423, 'failed_lock_semaphore_full');
  });

  it('never grants more than the slots to a storm of 20 nodes locking and unlocking', async () => {
    const slots = 3;
    // Every semaphore that gets stored is checked, not just the final one.
    let most = 0;
    class CheckingStore extends RacingStore {
      override async write(group: string, sem: Semaphore, revision: string): Promise<boolean> {
        const written = await super.write(group, sem, revision);
        if (written) most = Math.max(most, sem.holders.length);
        return written;
      }
    }
    const s = await serve({ default: { slots } }, { store: new CheckingStore({ latencyMs: 1 }) });
    const ids = Array.from({ length: 20 }, (_, n) => `node-${n}`);
    const first = await Promise.all(ids.map((id) => lockAs(s, id)));
    assert.equal(first.filter((r) => r.status === 200).length, slots);
    for (const r of first.filter((x) => x.status !== 200))
      assertError(r, 423, 'failed_lock_semaphore_full');
    // Every node now loops like Zincati: pre-reboot until 200, then steady-state.
    await Promise.all(
      ids.map(async (id) => {
        while ((await lockAs(s, id)).status !== 200)
          await new Promise((r) => setTimeout(r, Math.random() * 10));
        assert.ok((await holders(s)).length <= slots);
        assert.equal((await unlockAs(s, id)).status, 200);
      }),
    );
    assert.equal(most, slots, 'the slots filled up, and never more');
    assert.deepEqual(await holders(s), []);
    assert.ok(s.store.stats.conflicts > 0, 'the storm exercised the compare-and-swap retry');
  });

  it('decides again on the fresh value after a conflicting write', async () => {
    const s = await serve({ default: { slots: 1 } });
    let raced = false;
    s.store.beforeWrite = () => {
      if (raced) return;
      raced = true;
      s.store.put('default', { slots: 1, holders: ['sneaky'] });
    };
    assertError(await lockAs(s, 'node-a'), 423, 'failed_lock_semaphore_full');
    assert.deepEqual(await holders(s), ['sneaky']);
  });

  it('answers store_unavailable when the compare-and-swap keeps losing', async () => {
    const s = await serve({ default: { slots: 1 } }, { maxAttempts: 3 });
    s.store.beforeWrite = () => {
      s.store.put('default', newSemaphore(1));
    };
    assertError(await lockAs(s, 'node-a'), 503, 'store_unavailable');
  });

  it('answers store_unavailable when the store fails, and internal_error without a stack for a bug', async () => {
    const failing = (e: Error): FleetLockStore => ({
      read: () => Promise.reject(e),
      write: () => Promise.reject(e),
      close: () => Promise.resolve(),
    });
    const down = await serve(undefined, {
      store: failing(new MoltError(ErrorCode.EtcdUnhealthy, 'etcd: read failed: no leader')),
    });
    assertError(await lockAs(down, 'a'), 503, 'store_unavailable');
    assert.deepEqual(down.internal, []);
    const buggy = await serve(undefined, { store: failing(new TypeError('x is undefined')) });
    const r = await unlockAs(buggy, 'a');
    assertError(r, 500, 'internal_error');
    assert.ok(!r.text.includes('TypeError') && !r.text.includes('.ts:'), r.text);
    assert.equal(buggy.internal.length, 1);
  });

  it('answers other methods with 405 and Allow: POST, and other paths with 404', async () => {
    const s = await serve();
    for (const method of ['GET', 'PUT', 'DELETE', 'PATCH']) {
      const res = await fetch(new URL('v1/pre-reboot', s.base), {
        method,
        headers: { 'fleet-lock-protocol': 'true' },
      });
      assert.equal(res.headers.get('allow'), 'POST');
      assertError({ status: res.status, json: await res.json() }, 405, 'method_not_allowed');
    }
    const head = await fetch(new URL('v1/steady-state', s.base), { method: 'HEAD' });
    assert.equal(head.status, 405);
    const res = await fetch(new URL('v2/pre-reboot', s.base), { method: 'POST', body: '{}' });
    assertError({ status: res.status, json: await res.json() }, 404, 'not_found');
  });

  it('leaves the rest of the server alone', async () => {
    const app = Fastify({ logger: false });
    app.post('/other', (request, reply) => reply.send(request.body));
    await registerFleetLock(app, {
      store: new MemoryFleetLockStore(),
      groups: () => ({ slots: 1 }),
      now: () => 0,
    });
    const res = await app.inject({ method: 'POST', url: '/other', payload: { a: 1 } });
    assert.deepEqual(res.json(), { a: 1 });
    await app.close();
  });
});

describe('fleetLockGroup', () => {
  it('takes the tightest concurrency limit as the slots, one without any', () => {
    assert.equal(fleetLockGroup([], 10).slots, 1);
    const g = fleetLockGroup(
      [
        { kind: 'concurrency', limit: { count: 4 } },
        { kind: 'concurrency', limit: { percent: 25 } },
      ],
      12,
    );
    assert.equal(g.slots, 3);
    assert.equal(g.windowOpen, undefined);
  });

  it('opens only inside every window policy, evaluated by the planner window code', () => {
    const g = fleetLockGroup(
      [
        { kind: 'window', windows: [{ cron: '0 2 * * *', durationMs: 3_600_000 }] },
        {
          kind: 'window',
          windows: [{ cron: '0 0 * * *', durationMs: 86_400_000 }],
          exclusions: [{ cron: '30 2 24 11 *', durationMs: 600_000 }],
        },
      ],
      5,
    );
    assert.ok(g.windowOpen !== undefined);
    assert.equal(g.windowOpen(Date.parse('2026-11-23T02:15:00Z')), true);
    assert.equal(g.windowOpen(Date.parse('2026-11-23T03:15:00Z')), false);
    assert.equal(g.windowOpen(Date.parse('2026-11-24T02:35:00Z')), false, 'excluded');
  });
});

describe('FleetLock slot expiry and caller binding', () => {
  const minute = 60_000;

  it('frees the slot of a holder that never came back once its TTL has passed', async () => {
    let now = Date.parse('2026-11-24T02:30:00Z');
    const recovered: string[] = [];
    const s = await serve(
      { default: { slots: 1, ttlMs: 10 * minute } },
      { now: () => now, onRecovered: (g, ids) => recovered.push(...ids.map((i) => `${g}/${i}`)) },
    );
    assert.equal((await lockAs(s, 'dead-node')).status, 200);
    now += 10 * minute - 1;
    assertError(await lockAs(s, 'node-b'), 423, 'failed_lock_semaphore_full');
    now += 1;
    assert.equal((await lockAs(s, 'node-b')).status, 200, 'the expired slot went to the next node');
    assert.deepEqual(await holders(s), ['node-b']);
    assert.deepEqual(recovered, ['default/dead-node']);
  });

  it('renews the slot each time its holder asks again', async () => {
    let now = Date.parse('2026-11-24T02:30:00Z');
    const s = await serve({ default: { slots: 1, ttlMs: 10 * minute } }, { now: () => now });
    assert.equal((await lockAs(s, 'node-a')).status, 200);
    for (let n = 0; n < 5; n++) {
      now += 9 * minute;
      assert.equal((await lockAs(s, 'node-a')).status, 200, 'renewed');
      assertError(await lockAs(s, 'node-b'), 423, 'failed_lock_semaphore_full');
    }
    assert.deepEqual(await holders(s), ['node-a']);
  });

  it('expires a made-up id too, with the default TTL of one hour', async () => {
    let now = 0;
    const s = await serve({ default: { slots: 1 } }, { now: () => now });
    assert.equal((await lockAs(s, 'made-up')).status, 200);
    now += 60 * minute;
    assert.equal((await lockAs(s, 'real')).status, 200);
  });

  it('answers 403 forbidden when the listener does not let the caller speak for the id', async () => {
    const s = await serve(
      { default: { slots: 1 } },
      { bind: (_r, p) => (p.id === 'mine' ? undefined : `you may not speak for ${p.id}`) },
    );
    assert.equal((await lockAs(s, 'mine')).status, 200);
    const r = await unlockAs(s, 'mine-not');
    assertError(r, 403, 'forbidden');
    assertError(await lockAs(s, 'other'), 403, 'forbidden');
    assert.deepEqual(await holders(s), ['mine']);
  });
});
