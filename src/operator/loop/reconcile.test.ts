// SPDX-License-Identifier: Apache-2.0
// One reconcile pass on the in-memory store and a scripted agent gateway: a start is recorded
// before the agent is asked and resubmitted when the answer was lost; a release that disappears,
// or an agent answering garbage, pauses the rollout instead of guessing.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ErrorCode, MoltError } from '../../core/errors.ts';
import type { Pool, Rollout } from '../../core/rollout/types.ts';
import type { AgentStatus } from '../../protocol/agent.ts';
import type { HoldView } from '../../protocol/agent-hold.ts';
import type { AgentGateway } from '../ports/agents.ts';
import { MemoryOperatorStore } from '../adapters/memory-store/operator-store.ts';
import type { ReconcileDeps } from './deps.ts';
import { rollbackRolloutOf } from '../decide/fleet-rollback.ts';
import { d10, d11, idle, release, testSettings, w1 } from '../decide/fixtures.test.ts';
import { newPassState, reconcile } from './reconcile.ts';

/** An agent gateway whose answers the test scripts; it records the upgrades asked for. */
function scripted() {
  const g = {
    status: (): Promise<AgentStatus> => Promise.resolve(idle(d10)),
    upgrade: (): Promise<{ operationId: string }> => Promise.resolve({ operationId: 'op-1' }),
    apply: (operationId: string): Promise<{ operationId: string }> =>
      Promise.resolve({ operationId }),
    /** The hold the agent keeps (pushed holds land here). */
    hold: null as HoldView | null,
    /** While set, pushing a hold fails with it (the agent away). */
    holdError: undefined as Error | undefined,
    asked: [] as string[],
  };
  const gateway: AgentGateway = {
    status: () => g.status(),
    upgrade: (m, request) => {
      g.asked.push(`${m.id} ${request.stage === true ? 'stage ' : ''}${request.image}`);
      return g.upgrade();
    },
    apply: (m, request) => {
      g.asked.push(`${m.id} apply ${request.operationId}`);
      return g.apply(request.operationId);
    },
    discard: (m, operationId) => {
      g.asked.push(`${m.id} discard ${operationId}`);
      return Promise.resolve({ operationId });
    },
    rollback: (m) => {
      g.asked.push(`${m.id} rollback`);
      return Promise.resolve({ operationId: 'op-back' });
    },
    setHold: (m, hold) => {
      if (g.holdError !== undefined) return Promise.reject(g.holdError);
      g.asked.push(`${m.id} hold ${hold.reason} for ${hold.onBehalfOf}`);
      g.hold = {
        reason: hold.reason,
        until: new Date(hold.until).toISOString(),
        setBy: { name: 'operator', role: 'operator' },
        onBehalfOf: hold.onBehalfOf,
        setAt: new Date().toISOString(),
      };
      return Promise.resolve({ hold: g.hold });
    },
    clearHold: (m) => {
      if (g.holdError !== undefined) return Promise.reject(g.holdError);
      g.asked.push(`${m.id} release`);
      g.hold = null;
      return Promise.resolve({ hold: null });
    },
    close: () => Promise.resolve(),
  };
  return { g, gateway };
}

async function setup(
  releases: ReturnType<typeof release>[],
  pools: Pool[] = [{ name: 'workers', channel: 'stable', policies: [] }],
) {
  const store = new MemoryOperatorStore();
  await store.putMachine(w1);
  const { g, gateway } = scripted();
  const feed = { releases };
  const d: ReconcileDeps = {
    store,
    agents: gateway,
    releases: () => Promise.resolve(feed.releases),
    settings: testSettings(pools),
    now: () => Date.now(),
    log: () => undefined,
  };
  return { store, g, feed, d, state: newPassState() };
}

const only = async (store: MemoryOperatorStore): Promise<Rollout> => {
  const { rollouts } = await store.read();
  assert.equal(rollouts.length, 1);
  return rollouts[0]!;
};

describe('reconcile', () => {
  it('records a start before asking the agent, and asks again when the answer was lost', async () => {
    const { store, g, d, state } = await setup([release('1.1.0', d11), release('1.0.0', d10)]);
    g.upgrade = () =>
      Promise.reject(new MoltError(ErrorCode.AgentUnreachable, 'reset', { retryable: true }));
    await reconcile(d, state);
    let r = await only(store);
    assert.equal(
      r.machines['w-1']?.phase,
      'InFlight',
      'the start is recorded even though the agent never answered',
    );
    assert.equal(r.machines['w-1'].operationId, undefined);
    assert.equal((await store.read()).starts.length, 1);
    g.upgrade = () => Promise.resolve({ operationId: 'op-7' });
    await reconcile(d, state);
    r = await only(store);
    assert.equal(r.machines['w-1']?.operationId, 'op-7', 'resubmitted and remembered');
    assert.equal(
      (await store.read()).starts.length,
      1,
      'still one start: the rate limit counts it once',
    );
    assert.deepEqual(g.asked, [`w-1 reg/molt@${d11}`, `w-1 reg/molt@${d11}`]);
    g.status = () =>
      Promise.resolve(
        idle(d11, { operationId: 'op-7', kind: 'upgrade', result: 'Succeeded', finishedAt: 'x' }),
      );
    await reconcile(d, state);
    r = await only(store);
    assert.equal(r.machines['w-1']?.phase, 'Succeeded');
    assert.equal(r.state, 'Completed');
  });

  it('pauses a rollout whose release disappeared from the repository, and starts nothing', async () => {
    const oneAtATime: Pool[] = [
      {
        name: 'workers',
        channel: 'stable',
        policies: [{ kind: 'concurrency', limit: { count: 1 } }],
      },
    ];
    const releases = [release('1.1.0', d11), release('1.0.0', d10)];
    const { store, g, feed, d, state } = await setup(releases, oneAtATime);
    g.upgrade = () => Promise.reject(new MoltError(ErrorCode.AgentBusy, 'busy'));
    await store.putMachine({ ...w1, id: 'w-2', endpoint: 'https://127.0.0.1:2' });
    await reconcile(d, state);
    assert.equal(g.asked.length, 1, 'one machine started');
    feed.releases = [release('1.0.0', d10)];
    await reconcile(d, state);
    const r = await only(store);
    assert.equal(r.state, 'Paused');
    const history = await store.history();
    assert.ok(
      history.some((e) => /paused: release 1\.1\.0 .* disappeared/.test(e.message)),
      JSON.stringify(history),
    );
  });

  it('pauses a rollout whose release a person blocked for its pool at the next scan', async () => {
    const { store, g, d, state } = await setup([release('1.1.0', d11), release('1.0.0', d10)]);
    g.upgrade = () => Promise.reject(new MoltError(ErrorCode.AgentBusy, 'busy'));
    await store.putMachine({ ...w1, id: 'w-2', endpoint: 'https://127.0.0.1:2' });
    await reconcile(d, state);
    assert.equal((await only(store)).state, 'Active');
    await store.putBlock({ digest: d11, pool: 'workers', reason: 'CVE-1', by: 'ops', at: 1 });
    state.lastDiscovery = undefined;
    await reconcile(d, state);
    assert.equal((await only(store)).state, 'Paused');
    assert.ok(
      (await store.history()).some((e) =>
        /paused: release 1\.1\.0 was blocked by ops: CVE-1/.test(e.message),
      ),
    );
  });

  it('pauses a rollout when the agent of an in-flight machine answers garbage', async () => {
    const { store, g, d, state } = await setup([release('1.1.0', d11), release('1.0.0', d10)]);
    await reconcile(d, state);
    g.status = () => Promise.reject(new MoltError(ErrorCode.AgentProtocol, 'not molt'));
    await reconcile(d, state);
    const r = await only(store);
    assert.equal(r.state, 'Paused');
    assert.equal(r.machines['w-1']?.phase, 'InFlight', 'its progress is not guessed');
  });

  it('never starts a machine whose endpoint leads to another machine, and says so once', async () => {
    const { store, g, d, state } = await setup([release('1.1.0', d11), release('1.0.0', d10)]);
    const impostor = new MoltError(
      ErrorCode.AgentIdentity,
      'the agent at https://127.0.0.1:1 presents the certificate of m1, not the certificate of w-1',
    );
    g.status = () => Promise.reject(impostor);
    await reconcile(d, state);
    await reconcile(d, state);
    assert.deepEqual(g.asked, [], 'nothing asked of the agent');
    // (No rollout at all, since discovery does not count a machine it never saw: R1.)
    const { rollouts } = await store.read();
    assert.ok(
      rollouts.every((r) => r.machines['w-1'] === undefined),
      'never started',
    );
    const warnings = (await store.history()).filter((h) => h.kind === 'warning');
    assert.deepEqual(
      warnings.map((h) => [h.machine, h.message]),
      [['w-1', `w-1: MOLT_AGENT_IDENTITY: ${impostor.message}`]],
      'one warning, not one per pass',
    );
    g.status = () => Promise.resolve(idle(d10));
    await reconcile(d, state);
    assert.equal(state.impostors.size, 0, 'forgotten once it answers as itself');
  });

  it('pauses a rollout when an in-flight machine’s endpoint leads to another machine', async () => {
    const { store, g, d, state } = await setup([release('1.1.0', d11), release('1.0.0', d10)]);
    await reconcile(d, state);
    g.status = () =>
      Promise.reject(new MoltError(ErrorCode.AgentIdentity, 'presents the certificate of m1'));
    await reconcile(d, state);
    const r = await only(store);
    assert.equal(r.state, 'Paused');
    assert.equal(r.machines['w-1']?.phase, 'InFlight', 'its progress is not guessed');
    assert.ok(
      (await store.history()).some((h) =>
        /w-1 cannot be watched: MOLT_AGENT_IDENTITY/.test(h.message),
      ),
    );
  });

  it('pauses, and puts the machine back, when the cluster stopped its drain (API server away)', async () => {
    const { store, g, d, state } = await setup([release('1.1.0', d11), release('1.0.0', d10)]);
    await reconcile(d, state);
    assert.equal((await only(store)).machines['w-1']?.phase, 'InFlight');
    g.status = () =>
      Promise.resolve(
        idle(d10, {
          operationId: 'op-1',
          kind: 'upgrade',
          result: 'Failed',
          code: ErrorCode.KubeUnavailable,
          reason: 'list the pods of node w-1: connection refused',
          finishedAt: new Date().toISOString(),
        }),
      );
    await reconcile(d, state);
    const r = await only(store);
    assert.equal(r.state, 'Paused');
    assert.equal(r.machines['w-1'], undefined, 'Pending again: tried anew after a resume');
    const history = await store.history();
    assert.ok(
      history.some((h) => h.kind === 'rollout-state' && /could not be drained/.test(h.message)),
    );
    assert.ok(!history.some((h) => h.kind === 'machine-result'), 'not counted as a failure');
  });

  it('rolls a halted rollout back fleet-wide: a machine whose other slot holds the old release switches back', async () => {
    const { store, g, d, state } = await setup([release('1.1.0', d11), release('1.0.0', d10)]);
    const halted: Rollout = {
      id: 'workers-1.1.0',
      pool: 'workers',
      target: { version: '1.1.0', digest: d11 },
      from: { version: '1.0.0', digest: d10 },
      state: 'Halted',
      createdAt: 1,
      machines: { 'w-1': { phase: 'Succeeded', startedAt: 1, finishedAt: 2 } },
    };
    await store.createRollout(halted);
    // w-1 boots 1.1.0 from slot B; slot A still holds 1.0.0.
    const onB = (last: AgentStatus['last']): AgentStatus => ({
      ...idle(d11, last),
      bootedSlot: last === null ? 'B' : 'A',
      slots: [
        { slot: 'A', status: 'ready', version: '1.0.0', digest: d10, generation: 1 },
        { slot: 'B', status: 'ready', version: '1.1.0', digest: d11, generation: 2 },
      ],
      boot: {
        bootloader: 'grub',
        committed: last === null ? 'B' : 'A',
        oneShot: null,
        entries: [],
      },
    });
    g.status = () => Promise.resolve(onB(null));
    assert.throws(() => rollbackRolloutOf({ ...halted, state: 'Active' }, 5), /pause it first/);
    const back = rollbackRolloutOf(halted, 5);
    assert.deepEqual(
      [back.target.digest, back.from?.digest, back.rollbackOf],
      [d10, d11, halted.id],
    );
    assert.equal(back.only, undefined, 'a pool rollout rolls back the pool');
    assert.deepEqual(rollbackRolloutOf({ ...halted, only: ['w-1'] }, 5).only, ['w-1']);
    await store.createRollout(back);
    await reconcile(d, state);
    assert.deepEqual(g.asked, ['w-1 rollback'], 'switched slots, nothing pulled');
    g.status = () =>
      Promise.resolve(
        onB({
          operationId: 'op-back',
          kind: 'rollback',
          result: 'RolledBack',
          reason: 'manual',
          finishedAt: 'x',
        }),
      );
    await reconcile(d, state);
    const after = (await store.read()).rollouts.find((r) => r.id === back.id);
    assert.ok(after !== undefined);
    assert.equal(after.machines['w-1']?.phase, 'Succeeded');
    assert.equal(after.state, 'Completed');
  });

  it('rolls a halted rollout back by itself in a pool with onHalt: rollback, and ends it RolledBack with its release blocked for the pool', async () => {
    const pools: Pool[] = [
      { name: 'workers', channel: 'stable', policies: [], onHalt: 'rollback' },
      { name: 'db', channel: 'stable', policies: [] },
    ];
    const { store, g, d, state } = await setup(
      [release('1.1.0', d11), release('1.0.0', d10)],
      pools,
    );
    g.status = () => Promise.resolve(idle(d11));
    const halted = (id: string, pool: string): Rollout => ({
      ...{ id, pool, target: { version: '1.1.0', digest: d11 } },
      ...{ from: { version: '1.0.0', digest: d10 }, state: 'Halted', createdAt: 1 },
      machines: { 'w-1': { phase: 'RolledBack', reason: 'unhealthy' } },
    });
    await store.createRollout(halted('workers-1.1.0', 'workers'));
    await store.createRollout(halted('db-1.1.0', 'db'));
    await store.putBlock({ digest: d11, pool: 'workers', reason: 'halted', by: 'operator', at: 1 });
    await reconcile(d, state);
    const { rollouts } = await store.read();
    const byId = new Map(rollouts.map((r) => [r.id, r]));
    const back = byId.get('workers-1.1.0-rollback');
    assert.equal(back?.state, 'Active');
    assert.deepEqual(back.target, { version: '1.0.0', digest: d10 });
    assert.equal(back.rollbackOf, 'workers-1.1.0');
    assert.equal(byId.get('workers-1.1.0')?.state, 'RolledBack');
    assert.equal(
      byId.get('workers-1.1.0')?.endReason,
      'rolled back by workers-1.1.0-rollback (to 1.0.0)',
    );
    const blocks = (await store.read()).blocks.filter((b) => b.digest === d11);
    assert.deepEqual(
      blocks.map((b) => [b.pool, b.reason, b.rollout]),
      [['workers', 'rolled back by workers-1.1.0-rollback (to 1.0.0)', 'workers-1.1.0']],
      'the halt’s block now says the release was rolled back',
    );
    assert.equal(byId.get('db-1.1.0')?.state, 'Halted', 'the db pool waits for a person');
    assert.equal(byId.has('db-1.1.0-rollback'), false);
    assert.ok(
      (await store.history()).some((e) =>
        /rolling back the halted workers-1\.1\.0 \(pool policy onHalt: rollback\)/.test(e.message),
      ),
    );
    // A rollback whose original was left unended (an operator stopped between the two writes)
    // is finished on the next pass; nothing is made twice.
    await store.createRollout(rollbackRolloutOf(halted('db-1.1.0', 'db'), 2));
    await reconcile(d, state);
    const after = await store.read();
    assert.equal(after.rollouts.find((r) => r.id === 'db-1.1.0')?.state, 'RolledBack');
    assert.ok(after.blocks.some((b) => b.digest === d11 && b.pool === 'db'));
    assert.equal(after.rollouts.length, 4);
  });

  it('starts nothing while a health gate fails; rolls back through its agent a machine the gates reject after its upgrade', async () => {
    const gated: Pool[] = [
      {
        name: 'workers',
        channel: 'stable',
        policies: [{ kind: 'gate', name: 'api', url: 'http://127.0.0.1:1/healthz' }],
      },
    ];
    const { store, g, d, state } = await setup(
      [release('1.1.0', d11), release('1.0.0', d10)],
      gated,
    );
    const gate = { ok: false };
    const deps: ReconcileDeps = {
      ...d,
      gates: {
        check: () => Promise.resolve({ ok: gate.ok, message: gate.ok ? 'HTTP 200' : 'HTTP 503' }),
      },
      settings: { ...d.settings, gateGraceMs: 0 },
    };
    await reconcile(deps, state);
    assert.deepEqual(g.asked, [], 'no start while the gate fails');
    gate.ok = true;
    await reconcile(deps, state);
    assert.deepEqual(g.asked, [`w-1 reg/molt@${d11}`]);
    // The agent reports the upgrade healthy, but the gate fails again: the machine goes back.
    gate.ok = false;
    g.status = () =>
      Promise.resolve(
        idle(d11, {
          operationId: 'op-1',
          kind: 'upgrade',
          result: 'Succeeded',
          finishedAt: new Date(0).toISOString(),
        }),
      );
    await reconcile(deps, state);
    assert.deepEqual(g.asked.slice(1), ['w-1 rollback']);
    const r = await only(store);
    assert.equal(r.machines['w-1']?.phase, 'RolledBack');
    assert.match(r.machines['w-1'].reason ?? '', /health gate api failing: HTTP 503/);
    assert.equal(r.state, 'Halted', 'the failure budget (1) is spent');
    assert.deepEqual(
      (await store.read()).blocks.map((b) => [b.digest, b.pool, b.by, b.rollout]),
      [[d11, 'workers', 'operator', r.id]],
      'the release it halted on is blocked for the pool',
    );
    assert.ok(
      (await store.history()).some((e) =>
        /release 1\.1\.0 blocked for pool workers/.test(e.message),
      ),
    );
  });
});

describe('reconcile with holds', () => {
  const HOUR = 3_600_000;
  const releases = () => [release('1.1.0', d11), release('1.0.0', d10)];
  const upgrades = (asked: readonly string[]) => asked.filter((a) => a.includes('reg/molt@'));

  it('pushes a stored hold to the agent until it lands, starts nothing meanwhile, and clears it once released', async () => {
    const { store, g, d, state } = await setup(releases());
    const log: string[] = [];
    const pass = () => reconcile({ ...d, log: (l) => log.push(l) }, state);
    g.status = () => Promise.resolve({ ...idle(d10), hold: g.hold });
    await store.setHold('w-1', { reason: 'disk swap', until: Date.now() + HOUR, by: 'alice' });
    g.holdError = new MoltError(ErrorCode.AgentUnreachable, 'connection reset', {
      retryable: true,
    });
    await pass();
    assert.ok(log.some((l) => /w-1: hold until .* not pushed to its agent, trying again/.test(l)));
    assert.deepEqual(g.asked, [], 'neither pushed nor started');
    assert.equal(g.hold, null);
    g.holdError = undefined;
    await pass();
    await pass();
    assert.deepEqual(g.asked, ['w-1 hold disk swap for alice'], 'pushed once it could be, once');
    assert.equal((g.hold as HoldView | null)?.onBehalfOf, 'alice');
    await store.setHold('w-1', undefined);
    await pass();
    assert.deepEqual(g.asked.slice(1), ['w-1 release', `w-1 reg/molt@${d11}`]);
  });

  it('waits for a hold set on the agent directly, and never clears it', async () => {
    const { store, g, d, state } = await setup(releases());
    g.hold = {
      reason: 'bios update',
      until: new Date(Date.now() + HOUR).toISOString(),
      setBy: { name: 'root', role: 'admin' },
      setAt: new Date().toISOString(),
    };
    g.status = () => Promise.resolve({ ...idle(d10), hold: g.hold });
    await reconcile(d, state);
    await reconcile(d, state);
    assert.deepEqual(g.asked, []);
    assert.deepEqual((await only(store)).machines, {});
  });

  it('puts a start the agent refused for its hold back to waiting, neither failed nor in flight', async () => {
    const { store, g, d, state } = await setup(releases());
    g.status = () => Promise.resolve({ ...idle(d10), hold: g.hold });
    g.upgrade = () => {
      // Held on the agent after the operator last looked at it.
      g.hold = {
        reason: 'bios update',
        until: new Date(Date.now() + HOUR).toISOString(),
        setBy: { name: 'root', role: 'admin' },
        setAt: new Date().toISOString(),
      };
      return Promise.reject(
        new MoltError(ErrorCode.MachineHeld, 'w-1 is held until later by root'),
      );
    };
    await reconcile(d, state);
    assert.equal(upgrades(g.asked).length, 1);
    let r = await only(store);
    assert.deepEqual(r.machines, {}, 'w-1 waits again');
    assert.equal(r.state, 'Active');
    assert.ok(
      (await store.history()).some((e) =>
        /w-1: not started, the machine is held on its agent/.test(e.message),
      ),
    );
    await reconcile(d, state);
    r = await only(store);
    assert.equal(upgrades(g.asked).length, 1, 'not asked again while held');
    assert.deepEqual(r.machines, {});
  });
  it('leaves image rollouts to the image driver, whose failure stops only it', async () => {
    const { store, g, d, state } = await setup([release('1.1.0', d11), release('1.0.0', d10)]);
    const unit = 'Deployment/shop/web';
    await store.createRollout({
      id: 'img-web-1.8.0-rev2-0000000a',
      pool: 'web/1.8.0-rev2',
      target: { version: '1.8.0-rev2', digest: d11 },
      state: 'Active',
      createdAt: Date.now(),
      machines: { [unit]: { phase: 'InFlight', startedAt: Date.now() } },
      images: { policy: 'web', repository: 'reg/web', units: {} },
    });
    await store.recordStart(
      {
        machine: 'Deployment/shop/other',
        pool: 'web/1.8.0-rev2',
        rollout: 'img-web-1.8.0-rev2-0000000a',
        at: Date.now(),
      },
      { phase: 'InFlight', startedAt: Date.now() },
    );
    const lines: string[] = [];
    const withImages: ReconcileDeps = {
      ...d,
      settings: {
        ...testSettings([{ name: 'workers', channel: 'stable', policies: [] }]),
        fleetPolicies: [{ kind: 'rate', count: 1, periodMs: 3_600_000 }],
      },
      log: (l) => lines.push(l),
      images: { pass: () => Promise.reject(new Error('the cluster is away')) },
    };
    await reconcile(withImages, state);
    const machine = (await store.read()).rollouts.find((r) => r.images === undefined);
    assert.equal(
      machine?.machines['w-1']?.phase,
      'InFlight',
      'the rate limit did not count the image start',
    );
    assert.deepEqual(g.asked, [`w-1 reg/molt@${d11}`]);
    assert.ok(
      lines.some((l) => l === 'image rollouts: the cluster is away'),
      lines.join('\n'),
    );
    const image = (await store.read()).rollouts.find((r) => r.images !== undefined);
    assert.equal(image?.machines[unit]?.phase, 'InFlight', 'the machine loop did not settle it');
    assert.equal(image.state, 'Active', 'nor judged it complete for want of machines');
  });
});

describe('reconcile: start records', () => {
  it('drops start records older than every rate period and a week, and keeps the rest', async () => {
    const day = 24 * 3_600_000;
    const monthly: Pool = {
      name: 'workers',
      channel: 'stable',
      policies: [{ kind: 'rate', count: 5, periodMs: 30 * day }],
    };
    for (const [pools, kept] of [
      [undefined, ['fresh', 'week-old']],
      [[monthly], ['fresh', 'week-old', 'month-old']],
    ] as const) {
      const { store, d, state } = await setup([release('1.0.0', d10)], pools && [...pools]);
      const now = Date.now();
      await store.createRollout({
        id: 'r-old',
        pool: 'workers',
        target: { version: '1.0.0', digest: d10 },
        state: 'Completed',
        createdAt: now - 40 * day,
        machines: {},
      } as unknown as Rollout);
      const ages = {
        fresh: 1 * day,
        'week-old': 6 * day,
        'month-old': 29 * day,
        ancient: 35 * day,
      };
      for (const [machine, age] of Object.entries(ages))
        await store.recordStart({ machine, pool: 'workers', rollout: 'r-old', at: now - age }, {
          phase: 'Succeeded',
          startedAt: now - age,
        } as never);
      await reconcile(d, state);
      const left = (await store.read()).starts.map((s) => s.machine).sort();
      assert.deepEqual(left, [...kept].sort(), JSON.stringify(pools));
    }
  });
});

describe('reconcile: an agent away', () => {
  it('fails an in-flight machine only once its agent stayed away unreachableFail in a row, not counting from its start', async () => {
    const { store, g, d, state } = await setup([release('1.1.0', d11), release('1.0.0', d10)]);
    let now = Date.now();
    const timed: ReconcileDeps = { ...d, now: () => now };
    await reconcile(timed, state);
    assert.equal((await only(store)).machines['w-1']?.phase, 'InFlight');
    // A long pull and drain: the agent answers, busy, for longer than the limit (60 s here).
    now += 90_000;
    await reconcile(timed, state);
    // Then it reboots: away for 50 s, less than the limit, though 140 s after the start.
    g.status = () =>
      Promise.reject(new MoltError(ErrorCode.AgentUnreachable, 'rebooting', { retryable: true }));
    for (const step of [1_000, 25_000, 24_000]) {
      now += step;
      await reconcile(timed, state);
    }
    assert.equal((await only(store)).machines['w-1']?.phase, 'InFlight', 'not failed yet');
    // Away past the limit, counted from the first unanswered look.
    now += 15_000;
    await reconcile(timed, state);
    const failed = (await only(store)).machines['w-1'];
    assert.equal(failed?.phase, 'Failed');
    assert.match(failed.reason ?? '', /^agent unreachable for 64 s: MOLT_AGENT_UNREACHABLE/);
  });
});

describe('reconcile: staging ahead of the window', () => {
  /** The agent as it answers once operation `id` is staged (written, verified, not armed). */
  const staged = (id: string): AgentStatus => ({
    ...idle(d10),
    phase: 'Staged',
    slots: [
      { slot: 'A', status: 'ready', version: '1.0.0', digest: d10, generation: 1 },
      { slot: 'B', status: 'staged', version: '1.1.0', digest: d11, generation: 2 },
    ],
    operation: {
      id,
      kind: 'upgrade',
      phase: 'Staged',
      image: `reg/molt@${d11}`,
      startedAt: new Date().toISOString(),
    },
  });
  // A window that opened last on the 1st of January: closed on any other day of the test.
  const closed: Pool = {
    name: 'workers',
    channel: 'stable',
    stage: { ahead: true, concurrency: 1 },
    policies: [{ kind: 'window', windows: [{ cron: '0 0 1 1 *', durationMs: 60_000 }] }],
  };

  /** `d` once the window has opened (the pool without it). */
  const opened = (d: ReconcileDeps): ReconcileDeps => ({
    ...d,
    settings: testSettings([{ ...closed, policies: [] }]),
  });

  it('stages the release while the window is closed, then only applies it when the machine starts', async () => {
    const { store, g, d, state } = await setup(
      [release('1.1.0', d11), release('1.0.0', d10)],
      [closed],
    );
    g.upgrade = () => Promise.resolve({ operationId: 'op-s' });
    await reconcile(d, state);
    let r = await only(store);
    assert.equal(r.machines['w-1'], undefined, 'not started: the window is closed');
    assert.deepEqual(g.asked, [`w-1 stage reg/molt@${d11}`]);
    assert.equal(r.staged?.['w-1']?.operationId, 'op-s');
    const history = await store.history();
    assert.ok(
      history.some(
        (e) => e.kind === 'machine-stage' && /staging 1\.1\.0 ahead of its start/.test(e.message),
      ),
      JSON.stringify(history),
    );

    g.status = () => Promise.resolve(staged('op-s'));
    await reconcile(d, state);
    assert.equal(g.asked.length, 1, 'staged and waiting: nothing more is asked');

    // The window opens: the start applies what was staged, under the staged operation's id.
    await reconcile(opened(d), state);
    r = await only(store);
    assert.deepEqual(g.asked.slice(1), ['w-1 apply op-s']);
    assert.equal(r.machines['w-1']?.phase, 'InFlight');
    assert.equal(r.machines['w-1'].operationId, 'op-s');

    g.status = () =>
      Promise.resolve(
        idle(d11, { operationId: 'op-s', kind: 'upgrade', result: 'Succeeded', finishedAt: 'x' }),
      );
    await reconcile(opened(d), state);
    r = await only(store);
    assert.equal(r.machines['w-1']?.phase, 'Succeeded');
    assert.equal(r.staged, undefined, 'the record goes once the agent no longer holds it');
  });

  it('upgrades in full when what it staged is gone (discarded by a person meanwhile)', async () => {
    const { store, g, d, state } = await setup(
      [release('1.1.0', d11), release('1.0.0', d10)],
      [closed],
    );
    g.upgrade = () => Promise.resolve({ operationId: 'op-s' });
    await reconcile(d, state);
    g.apply = () => Promise.reject(new MoltError(ErrorCode.NotStaged, 'nothing is staged'));
    g.upgrade = () => Promise.resolve({ operationId: 'op-full' });
    await reconcile(opened(d), state);
    assert.deepEqual(g.asked, [
      `w-1 stage reg/molt@${d11}`,
      'w-1 apply op-s',
      `w-1 reg/molt@${d11}`,
    ]);
    assert.equal((await only(store)).machines['w-1']?.operationId, 'op-full');
  });
});
