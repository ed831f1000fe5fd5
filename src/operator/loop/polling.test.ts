// SPDX-License-Identifier: Apache-2.0
// Reconcile passes with a followed event stream (R1): a machine whose stream is open and
// quiet keeps its last observation instead of being asked every pass, one whose stream reported
// something is asked, and a machine the plan would start is asked first — a start never rests on a
// kept observation.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MemoryOperatorStore } from '../adapters/memory-store/operator-store.ts';
import type { AgentGateway } from '../ports/agents.ts';
import { d10, d11, idle, release, testSettings, w1 } from '../decide/fixtures.test.ts';
import type { ReconcileDeps } from './deps.ts';
import { newPassState, reconcile } from './reconcile.ts';

async function setup() {
  const store = new MemoryOperatorStore();
  await store.putMachine(w1);
  const log: string[] = [];
  const agent = { status: idle(d10) };
  const stream = { open: true, changes: 1 };
  const feed = { releases: [release('1.0.0', d10)] };
  const gateway: AgentGateway = {
    status: (m) => {
      log.push(`${m.id} status`);
      return Promise.resolve(agent.status);
    },
    upgrade: (m) => {
      log.push(`${m.id} upgrade`);
      return Promise.resolve({ operationId: 'op-1' });
    },
    apply: () => Promise.reject(new Error('nothing staged in this test')),
    discard: () => Promise.reject(new Error('nothing staged in this test')),
    rollback: () => Promise.resolve({ operationId: 'op-back' }),
    setHold: () => Promise.reject(new Error('no holds in this test')),
    clearHold: () => Promise.reject(new Error('no holds in this test')),
    close: () => Promise.resolve(),
  };
  const d: ReconcileDeps = {
    store,
    agents: gateway,
    watch: { track: () => undefined, stream: () => ({ ...stream }) },
    releases: () => Promise.resolve(feed.releases),
    settings: { ...testSettings([{ name: 'workers', channel: 'stable', policies: [] }]) },
    now: () => Date.now(),
    log: () => undefined,
  };
  return { store, d, log, agent, stream, feed, state: newPassState() };
}

describe('reconcile with followed agents', () => {
  it('asks a quiet machine once, then again only when its stream reports something', async () => {
    const { d, log, stream, state } = await setup();
    await reconcile(d, state);
    assert.deepEqual(log, ['w-1 status'], 'never seen: asked');
    await reconcile(d, state);
    await reconcile(d, state);
    assert.deepEqual(log, ['w-1 status'], 'open and quiet: not asked again');
    stream.changes++;
    await reconcile(d, state);
    assert.deepEqual(log, ['w-1 status', 'w-1 status'], 'its stream reported a change');
    stream.open = false;
    await reconcile(d, state);
    assert.equal(log.length, 3, 'its stream is lost: asked');
  });

  it('asks a machine it would start first, and does not start it when it turned out busy', async () => {
    const { store, d, log, agent, feed, state } = await setup();
    await reconcile(d, state);
    log.length = 0;
    // Busy now, but its stream said nothing (an event lost): the kept observation says Idle.
    agent.status = { ...idle(d10), phase: 'Downloading' };
    feed.releases = [release('1.1.0', d11), release('1.0.0', d10)];
    await reconcile(d, state);
    assert.deepEqual(log, ['w-1 status'], 'asked before the start, then not started');
    const { rollouts } = await store.read();
    assert.equal(rollouts[0]?.machines['w-1'], undefined, 'no start recorded');
    agent.status = idle(d10);
    await reconcile(d, state);
    assert.deepEqual(log.slice(1), ['w-1 status', 'w-1 upgrade'], 'idle again: started');
  });
});
