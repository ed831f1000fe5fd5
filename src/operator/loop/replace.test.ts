// SPDX-License-Identifier: Apache-2.0
// The replace strategy on the in-memory store, a scripted agent gateway and the testkit's lab
// provider behind the real HTTP adapter: a replace pool's start asks the provider (recorded
// first), settles on the provider's success plus the agent booting the target, fails with the
// provider's message (the failure budget halts); an in-place pool with a provider replaces a
// machine whose agent cannot apply the release, whether it refuses at once or fails later.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { ErrorCode, MoltError } from '../../core/errors.ts';
import type { Pool, Rollout } from '../../core/rollout/types.ts';
import type { AgentStatus } from '../../protocol/agent.ts';
import { startLabProvider, type LabReplaceRequest } from '../../testkit/lab-provider.ts';
import { createHttpProvider } from '../adapters/http-provider/index.ts';
import type { AgentGateway } from '../ports/agents.ts';
import { MemoryOperatorStore } from '../adapters/memory-store/operator-store.ts';
import type { ReconcileDeps } from './deps.ts';
import { d10, d11, idle, release, testSettings } from '../decide/fixtures.test.ts';
import { newPassState, reconcile } from './reconcile.ts';

/** The lab provider whose re-images the test finishes by hand (`finish`), per machine. */
async function labProvider() {
  const pending = new Map<string, { resolve: () => void; reject: (e: Error) => void }>();
  const lab = await startLabProvider({
    reimage: (r: LabReplaceRequest) =>
      new Promise<void>((resolve, reject) => {
        pending.set(r.machine, { resolve, reject });
      }),
  });
  const finish = async (machine: string, error?: string): Promise<void> => {
    const p = pending.get(machine);
    assert.ok(p !== undefined, `no re-image of ${machine} running`);
    if (error === undefined) p.resolve();
    else p.reject(new Error(error));
    await new Promise((r) => setTimeout(r, 5));
  };
  return { lab, finish };
}

const labs: { close(): Promise<void> }[] = [];
after(() => Promise.all(labs.map((l) => l.close())));

async function setup(pool: Omit<Pool, 'provider'>, machines = ['w-1']) {
  const { lab, finish } = await labProvider();
  labs.push(lab);
  const store = new MemoryOperatorStore();
  for (const [i, id] of machines.entries())
    await store.putMachine({
      id,
      endpoint: `https://127.0.0.1:${String(i + 1)}`,
      role: 'worker',
      pool: 'workers',
      labels: {},
    });
  const agent = {
    status: new Map<string, () => Promise<AgentStatus>>(),
    upgrade: (): Promise<{ operationId: string }> => Promise.resolve({ operationId: 'op-1' }),
    asked: [] as string[],
  };
  const gateway: AgentGateway = {
    status: (m) => agent.status.get(m.id)?.() ?? Promise.resolve(idle(d10)),
    upgrade: (m) => {
      agent.asked.push(`${m.id} upgrade`);
      return agent.upgrade();
    },
    apply: () => Promise.reject(new Error('nothing staged in this test')),
    discard: () => Promise.reject(new Error('nothing staged in this test')),
    rollback: (m) => {
      agent.asked.push(`${m.id} rollback`);
      return Promise.resolve({ operationId: 'op-back' });
    },
    setHold: () => Promise.reject(new Error('no holds in this test')),
    clearHold: () => Promise.reject(new Error('no holds in this test')),
    close: () => Promise.resolve(),
  };
  const provider = createHttpProvider({ url: lab.url });
  const full: Pool = { ...pool, provider: { url: lab.url } };
  const d: ReconcileDeps = {
    store,
    agents: gateway,
    providers: (name) => (name === 'workers' ? provider : undefined),
    releases: () => Promise.resolve([release('1.1.0', d11), release('1.0.0', d10)]),
    settings: testSettings([full]),
    now: () => Date.now(),
    log: () => undefined,
  };
  const pass = (): Promise<void> => reconcile(d, state);
  const state = newPassState();
  const rollout = async (): Promise<Rollout> => {
    const { rollouts } = await store.read();
    assert.equal(rollouts.length, 1);
    return rollouts[0]!;
  };
  return { store, agent, lab, finish, pass, rollout };
}

const down = (): Promise<AgentStatus> =>
  Promise.reject(new MoltError(ErrorCode.AgentUnreachable, 'rebooting', { retryable: true }));

describe('replace strategy', () => {
  it('a replace pool asks the provider, not the agent; done once the provider succeeded and the agent boots the target', async () => {
    const t = await setup({
      name: 'workers',
      channel: 'stable',
      strategy: 'replace',
      policies: [],
    });
    await t.pass();
    assert.deepEqual(t.agent.asked, [], 'the agent is not asked to upgrade');
    assert.deepEqual(t.lab.requests, [
      {
        machine: 'w-1',
        endpoint: 'https://127.0.0.1:1',
        image: `reg/molt@${d11}`,
        digest: d11,
        version: '1.1.0',
      },
    ]);
    let r = await t.rollout();
    assert.equal(r.machines['w-1']?.phase, 'InFlight');
    assert.equal(r.machines['w-1'].operationId, 'replace:lab-1');
    assert.equal((await t.store.read()).starts.length, 1, 'the start was recorded');
    // Re-imaging: the agent is away, the provider says running.
    t.agent.status.set('w-1', down);
    await t.pass();
    assert.equal((await t.rollout()).machines['w-1']?.phase, 'InFlight');
    // The provider is done, but the new agent does not answer yet: still in flight.
    await t.finish('w-1');
    await t.pass();
    assert.equal((await t.rollout()).machines['w-1']?.phase, 'InFlight');
    t.agent.status.set('w-1', () => Promise.resolve(idle(d11)));
    await t.pass();
    r = await t.rollout();
    assert.equal(r.machines['w-1']?.phase, 'Succeeded');
    assert.equal(r.state, 'Completed');
    assert.equal(t.lab.requests.length, 1, 'asked once');
    const history = await t.store.history();
    assert.ok(
      history.some(
        (e) =>
          e.kind === 'machine-start' &&
          /replace with 1\.1\.0 accepted by the provider/.test(e.message),
      ),
      JSON.stringify(history),
    );
  });

  it('a failed replace fails the machine with the provider’s message, and the failure budget halts the rollout', async () => {
    const t = await setup(
      {
        name: 'workers',
        channel: 'stable',
        strategy: 'replace',
        policies: [{ kind: 'concurrency', limit: { count: 1 } }],
      },
      ['w-1', 'w-2'],
    );
    await t.pass();
    assert.equal(t.lab.requests.length, 1, 'one machine at a time');
    const first = t.lab.requests[0]!.machine;
    await t.finish(first, 'disk wipe failed');
    await t.pass();
    const r = await t.rollout();
    assert.equal(r.machines[first]?.phase, 'Failed');
    assert.equal(r.machines[first].reason, 'replace failed: disk wipe failed');
    assert.equal(r.state, 'Halted');
    assert.match(r.stateReason ?? '', /^failure budget: 1 machine failed/, 'why it waits, kept');
    assert.equal(t.lab.requests.length, 1, 'nothing else started');
  });

  it('an in-place pool with a provider replaces a machine whose agent refuses the release as invalid for it', async () => {
    const t = await setup({ name: 'workers', channel: 'stable', policies: [] });
    t.agent.upgrade = () => Promise.reject(new MoltError(ErrorCode.AgentBusy, 'busy'));
    await t.pass();
    assert.equal(t.lab.requests.length, 0, 'a busy agent is asked again, not replaced');
    t.agent.upgrade = () =>
      Promise.reject(new MoltError(ErrorCode.ImageInvalid, 'the disk layout changed'));
    await t.pass();
    assert.deepEqual(t.agent.asked, ['w-1 upgrade', 'w-1 upgrade']);
    assert.equal(t.lab.requests.length, 1);
    assert.equal((await t.rollout()).machines['w-1']?.operationId, 'replace:lab-1');
    const history = await t.store.history();
    const start = history.find((e) => e.kind === 'machine-start');
    assert.match(
      start?.message ?? '',
      /the agent cannot apply 1\.1\.0 \(MOLT_IMAGE_INVALID: the disk layout changed\); replacing the machine through the provider/,
    );
    assert.equal(start?.data?.['fallback'], 'MOLT_IMAGE_INVALID: the disk layout changed');
    await t.finish('w-1');
    t.agent.status.set('w-1', () => Promise.resolve(idle(d11)));
    await t.pass();
    assert.equal((await t.rollout()).machines['w-1']?.phase, 'Succeeded');
  });

  it('an in-place upgrade the agent accepted but then failed as unappliable is replaced, not counted failed', async () => {
    const t = await setup({ name: 'workers', channel: 'stable', policies: [] });
    await t.pass();
    assert.equal((await t.rollout()).machines['w-1']?.operationId, 'op-1');
    const failed = (code: string): AgentStatus['last'] => ({
      operationId: 'op-1',
      kind: 'upgrade',
      result: 'Failed',
      code,
      reason: 'kernel artifact missing',
      finishedAt: 'x',
    });
    t.agent.status.set('w-1', () => Promise.resolve(idle(d10, failed(ErrorCode.ImageInvalid))));
    await t.pass();
    const r = await t.rollout();
    assert.equal(r.machines['w-1']?.phase, 'InFlight');
    assert.equal(r.machines['w-1'].operationId, 'replace:lab-1');
    assert.equal(r.state, 'Active');
    await t.finish('w-1');
    t.agent.status.set('w-1', () => Promise.resolve(idle(d11)));
    await t.pass();
    assert.equal((await t.rollout()).machines['w-1']?.phase, 'Succeeded');
  });

  it('an in-place failure outside the fallback set is a failure, even with a provider', async () => {
    const t = await setup({ name: 'workers', channel: 'stable', policies: [] });
    await t.pass();
    t.agent.status.set('w-1', () =>
      Promise.resolve(
        idle(d10, {
          operationId: 'op-1',
          kind: 'upgrade',
          result: 'Failed',
          code: ErrorCode.SlotVerifyFailed,
          finishedAt: 'x',
        }),
      ),
    );
    await t.pass();
    const r = await t.rollout();
    assert.equal(r.machines['w-1']?.phase, 'Failed');
    assert.equal(t.lab.requests.length, 0);
  });
});
