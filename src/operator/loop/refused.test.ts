// SPDX-License-Identifier: Apache-2.0
// An agent that refuses an upgrade for who asks (MOLT_FORBIDDEN: the pool's drain policy asks for
// force-delete, which the machine grants admin only) fails that machine's start at once with the
// agent's reason, and is not asked again every pass.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ErrorCode, MoltError } from '../../core/errors.ts';
import type { Pool } from '../../core/rollout/types.ts';
import type { AgentGateway } from '../ports/agents.ts';
import { MemoryOperatorStore } from '../adapters/memory-store/operator-store.ts';
import { d10, d11, idle, release, testSettings, w1 } from '../decide/fixtures.test.ts';
import type { ReconcileDeps } from './deps.ts';
import { newPassState, reconcile } from './reconcile.ts';

describe('an upgrade the agent refuses for who asks', () => {
  it('fails the start with the readable reason and does not ask again', async () => {
    const store = new MemoryOperatorStore();
    await store.putMachine(w1);
    const asked: Parameters<AgentGateway['upgrade']>[1][] = [];
    const pools: Pool[] = [
      { name: 'workers', channel: 'stable', policies: [], drain: { onTimeout: 'force-delete' } },
    ];
    const d: ReconcileDeps = {
      store,
      agents: {
        status: () => Promise.resolve(idle(d10)),
        upgrade: (_m, request) => {
          asked.push(request);
          return Promise.reject(
            new MoltError(
              ErrorCode.Forbidden,
              'alice (role operator) may not ask for force-delete',
              {
                hint: 'set kubernetes.drain.forceDelete: allow',
              },
            ),
          );
        },
        apply: () => Promise.reject(new Error('nothing staged in this test')),
        discard: () => Promise.reject(new Error('nothing staged in this test')),
        rollback: () => Promise.resolve({ operationId: 'op-back' }),
        setHold: () => Promise.reject(new Error('no holds in this test')),
        clearHold: () => Promise.reject(new Error('no holds in this test')),
        close: () => Promise.resolve(),
      },
      releases: () => Promise.resolve([release('1.1.0', d11), release('1.0.0', d10)]),
      settings: testSettings(pools),
      now: () => Date.now(),
      log: () => undefined,
    };
    const state = newPassState();
    await reconcile(d, state);
    await reconcile(d, state);
    const [rollout] = (await store.read()).rollouts;
    const m = rollout?.machines['w-1'];
    assert.equal(m?.phase, 'Failed');
    assert.match(m.reason ?? '', /MOLT_FORBIDDEN: alice \(role operator\).*forceDelete: allow/);
    assert.equal(asked.length, 1, 'asked once, not every pass');
    assert.equal(asked[0]?.drain?.onTimeout, 'force-delete');
    const events = await store.history();
    assert.ok(JSON.stringify(events).includes('MOLT_FORBIDDEN'), 'the refusal is in the history');
  });
});
