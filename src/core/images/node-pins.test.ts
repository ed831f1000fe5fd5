// SPDX-License-Identifier: Apache-2.0
// The images the nodes keep: every GM digest, and the previous digests of image rollouts still
// running (none of an ended one); when a machine is told again.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Rollout } from '../rollout/types.ts';
import { nodePinList, pinsDue } from './node-pins.ts';

const d = (c: string): string => `sha256:${c.repeat(64)}`;
const repo = 'reg:5000/molt/web';

function rollout(state: Rollout['state'], from: string, extra: Partial<Rollout> = {}): Rollout {
  return {
    id: `img-web-1-${from}`,
    pool: 'web/1',
    target: { version: '1', digest: d('f') },
    state,
    createdAt: 0,
    machines: {},
    from: { version: '1', digest: d(from) },
    images: {
      policy: 'web',
      repository: repo,
      units: {
        'Deployment/shop/web': {
          changes: [
            { container: 'web', from: `${repo}:1@${d('b')}`, to: `${repo}:1@${d('f')}` },
            {
              container: 'side',
              from: 'reg:5000/molt/side:2',
              to: `reg:5000/molt/side:2@${d('e')}`,
            },
          ],
        },
      },
    },
    ...extra,
  };
}

describe('nodePinList', () => {
  it('pins every GM digest of every policy, sorted, once', () => {
    const policies = [
      {
        repository: repo,
        gm: [
          { digest: d('2'), reason: 'ga' },
          { digest: d('1'), reason: 'ga' },
        ],
      },
      { repository: 'reg:5000/molt/dns', gm: [{ digest: d('1'), reason: 'ga' }] },
      { repository: repo, gm: [{ digest: d('1'), reason: 'again' }] },
    ];
    assert.deepEqual(nodePinList(policies, []), [
      `reg:5000/molt/dns@${d('1')}`,
      `${repo}@${d('1')}`,
      `${repo}@${d('2')}`,
    ]);
  });

  it("keeps a running rollout's previous digests (by digest only), and forgets them once it ends", () => {
    const running = nodePinList([], [rollout('Active', 'a')]);
    assert.deepEqual(running, [`${repo}@${d('a')}`, `${repo}@${d('b')}`]);
    // A halted one that is not rolled back waits for a person, who may still roll it back.
    for (const state of ['Paused', 'Halted'] as const)
      assert.deepEqual(nodePinList([], [rollout(state, 'a')]), running, state);
    for (const state of ['Completed', 'Cancelled', 'Superseded'] as const)
      assert.deepEqual(nodePinList([], [rollout(state, 'a')]), [], state);
  });

  it('ignores machine rollouts', () => {
    const machine = { ...rollout('Active', 'a') } as Rollout & { images?: unknown };
    delete machine.images;
    assert.deepEqual(nodePinList([], [machine]), []);
  });
});

describe('pinsDue', () => {
  const t = { resendMs: 600_000, notNodeMs: 3_600_000, retryMs: 10_000 };
  const list = ['a', 'b'];
  it('sends the first time, and when the list changed', () => {
    assert.equal(pinsDue(undefined, list, 0, t), true);
    assert.equal(pinsDue({ kind: 'pinned', list: 'a', at: 0 }, list, 1, t), true);
  });
  it('asks a machine that failed again after retryMs, doubled per failure in a row, at most resendMs', () => {
    const failed = (tries: number) => ({ kind: 'failed', at: 0, tries, why: 'x' }) as const;
    assert.equal(pinsDue(failed(1), list, 9_999, t), false);
    assert.equal(pinsDue(failed(1), list, 10_000, t), true);
    assert.equal(pinsDue(failed(3), list, 39_999, t), false);
    assert.equal(pinsDue(failed(3), list, 40_000, t), true);
    assert.equal(pinsDue(failed(50), list, 599_999, t), false);
    assert.equal(pinsDue(failed(50), list, 600_000, t), true);
  });
  it('sends the same list again only after resendMs', () => {
    const sent = { kind: 'pinned', list: 'a\nb', at: 0 } as const;
    assert.equal(pinsDue(sent, list, 599_999, t), false);
    assert.equal(pinsDue(sent, list, 600_000, t), true);
  });
  it('asks a machine without a node runtime again only after notNodeMs', () => {
    const no = { kind: 'not-a-node', at: 0 } as const;
    assert.equal(pinsDue(no, ['c'], 3_599_999, t), false);
    assert.equal(pinsDue(no, ['c'], 3_600_000, t), true);
  });
});
