// SPDX-License-Identifier: Apache-2.0
// The leader's pinned-images pass: the list goes to every machine, again only when it changes or
// resendMs has passed; a machine without a node runtime is left alone for notNodeMs; a failure is
// that machine's line and is retried next pass; an image rollout's previous digest is sent while
// it runs and dropped when it ends; a standby sends nothing.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ErrorCode, MoltError } from '../../core/errors.ts';
import type { ImagePolicy } from '../../core/images/types.ts';
import type { Rollout } from '../../core/rollout/types.ts';
import type { NodePins } from '../ports/node-pins.ts';
import type { MachineRecord, StoredState } from '../ports/store.ts';
import { nodePinsPass, startNodePins, type NodePinsDeps, type PinsBook } from './node-pins.ts';

const d = (c: string): string => `sha256:${c.repeat(64)}`;
const repo = 'reg:5000/molt/web';
const machine = (id: string): MachineRecord => ({
  id,
  endpoint: `https://${id}:7443`,
  role: 'worker',
  pool: 'workers',
  labels: {},
});
const ids = (calls: readonly string[]): string[] =>
  calls.map((c) => c.slice(0, c.indexOf(' '))).sort();
const gm = (digest: string) => ({ repository: repo, gm: [{ digest, reason: 'GA' }] });

function world() {
  const calls: string[] = [];
  const answers = new Map<string, () => Promise<never>>();
  const pins: NodePins = {
    setPinned(m, images) {
      calls.push(`${m.id} ${images.join(',')}`);
      const fail = answers.get(m.id);
      if (fail !== undefined) return fail();
      return Promise.resolve({ pinned: [...images], unpinned: [] });
    },
    close: () => Promise.resolve(),
  };
  const state: {
    machines: MachineRecord[];
    rollouts: Rollout[];
    policies: Pick<ImagePolicy, 'repository' | 'gm'>[];
  } = {
    machines: [machine('node-1'), machine('node-2'), machine('lab-1')],
    rollouts: [],
    policies: [gm(d('1'))],
  };
  let now = 0;
  const lines: string[] = [];
  const deps: NodePinsDeps = {
    pins,
    store: {
      read: () =>
        Promise.resolve({ ...state, starts: [], holds: {}, blocks: [] } as unknown as StoredState),
    },
    policies: () => state.policies,
    now: () => now,
    log: (l) => lines.push(l),
    timing: { resendMs: 600_000, notNodeMs: 3_600_000, retryMs: 10_000 },
  };
  answers.set('lab-1', () =>
    Promise.reject(new MoltError(ErrorCode.NotKubernetesNode, 'no node runtime')),
  );
  return {
    calls,
    answers,
    state,
    lines,
    deps,
    book: new Map() as PinsBook,
    at: (t: number) => (now = t),
  };
}

describe('the pinned-images pass', () => {
  it('tells every machine the GM list once, and again when it changes or resendMs passed', async () => {
    const w = world();
    await nodePinsPass(w.deps, w.book);
    assert.deepEqual(w.calls.sort(), [
      `lab-1 ${repo}@${d('1')}`,
      `node-1 ${repo}@${d('1')}`,
      `node-2 ${repo}@${d('1')}`,
    ]);
    w.calls.length = 0;
    w.at(1_000);
    await nodePinsPass(w.deps, w.book);
    assert.deepEqual(w.calls, [], 'nothing changed');
    w.state.policies = [gm(d('1')), gm(d('2'))];
    await nodePinsPass(w.deps, w.book);
    assert.deepEqual(w.calls.sort(), [
      `node-1 ${repo}@${d('1')},${repo}@${d('2')}`,
      `node-2 ${repo}@${d('1')},${repo}@${d('2')}`,
    ]);
    w.calls.length = 0;
    w.at(601_000);
    await nodePinsPass(w.deps, w.book);
    assert.deepEqual(ids(w.calls), ['node-1', 'node-2']);
    w.at(3_600_000);
    w.calls.length = 0;
    await nodePinsPass(w.deps, w.book);
    // lab-1 is asked again once notNodeMs passed (the nodes are due again by resendMs too).
    assert.deepEqual(ids(w.calls), ['lab-1', 'node-1', 'node-2']);
  });

  it('retries a machine that failed, with one line naming it', async () => {
    const w = world();
    w.answers.set('node-2', () =>
      Promise.reject(new MoltError(ErrorCode.ImagePinFailed, `cannot pull ${repo}@${d('1')}`)),
    );
    await nodePinsPass(w.deps, w.book);
    assert.ok(
      w.lines.some((l) => l.startsWith(`node-2: images not pinned: cannot pull`)),
      w.lines.join('\n'),
    );
    w.answers.delete('node-2');
    w.calls.length = 0;
    w.at(10_000);
    await nodePinsPass(w.deps, w.book);
    assert.deepEqual(w.calls, [`node-2 ${repo}@${d('1')}`]);
  });

  it('asks a machine that keeps failing less and less often, with a line per cause, not per pass', async () => {
    const w = world();
    w.state.machines = [machine('node-2')];
    const away = () => Promise.reject(new MoltError(ErrorCode.AgentUnreachable, 'rebooting'));
    w.answers.set('node-2', away);
    const passAt = async (t: number) => {
      w.at(t);
      w.calls.length = 0;
      await nodePinsPass(w.deps, w.book);
      return w.calls.length;
    };
    // Tries at 0, 10 s, 30 s (20 s later), 70 s (40 s later); none in between.
    assert.deepEqual(
      [await passAt(0), await passAt(5_000), await passAt(10_000), await passAt(29_000)],
      [1, 0, 1, 0],
    );
    assert.deepEqual([await passAt(30_000), await passAt(69_000), await passAt(70_000)], [1, 0, 1]);
    const failures = () => w.lines.filter((l) => l.startsWith('node-2: images not pinned'));
    assert.equal(failures().length, 1, w.lines.join('\n'));
    w.answers.set('node-2', () =>
      Promise.reject(new MoltError(ErrorCode.ImagePinFailed, 'registry away')),
    );
    await passAt(1_000_000);
    assert.equal(failures().length, 2, 'a new cause is a new line');
    w.answers.delete('node-2');
    await passAt(2_000_000);
    assert.match(w.lines.at(-1) ?? '', /^node-2: 1 image pinned/);
  });

  it("keeps a running image rollout's previous digest, and drops it when the rollout ends", async () => {
    const w = world();
    w.state.machines = [machine('node-1')];
    const rollout = {
      id: 'img-web-1-abcdef12',
      pool: 'web/1',
      target: { version: '1', digest: d('f') },
      state: 'Active',
      createdAt: 0,
      machines: {},
      from: { version: '1', digest: d('a') },
      images: { policy: 'web', repository: repo, units: {} },
    } as unknown as Rollout;
    w.state.rollouts = [rollout];
    await nodePinsPass(w.deps, w.book);
    assert.deepEqual(w.calls, [`node-1 ${repo}@${d('1')},${repo}@${d('a')}`]);
    w.state.rollouts = [{ ...rollout, state: 'Completed' }];
    await nodePinsPass(w.deps, w.book);
    assert.deepEqual(w.calls.at(-1), `node-1 ${repo}@${d('1')}`);
  });

  it('sends nothing while not leading, and everything again once leading', async () => {
    const w = world();
    let leading = false;
    const running = startNodePins({ ...w.deps, everyMs: 10, leading: () => leading });
    await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual(w.calls, []);
    leading = true;
    await new Promise((r) => setTimeout(r, 50));
    await running.stop();
    assert.equal(w.calls.length, 3);
  });
});
