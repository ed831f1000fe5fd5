// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { AgentEvent } from '../../protocol/agent.ts';
import type { AgentEventSource } from '../ports/agent-events.ts';
import type { MachineRecord } from '../ports/store.ts';
import { reconnectDelay, startMachineWatch, type WatchChange } from './watch.ts';

const machine = (id: string, endpoint = `https://${id}:7443`): MachineRecord => ({
  id,
  endpoint,
  role: 'worker',
  pool: 'workers',
  labels: {},
});

const event = (kind: AgentEvent['kind'], phase: string): AgentEvent => ({
  operationId: 'op-1',
  seq: 1,
  time: new Date(0).toISOString(),
  kind,
  phase,
  status: 'info',
  message: phase,
  ...(kind === 'result' && { result: { result: 'Succeeded' as const } }),
});

/** An event source whose streams the test feeds: `push` to a machine, `end` its stream. */
function scriptedSource(): AgentEventSource & {
  push(id: string, e: AgentEvent): void;
  end(id: string): void;
  opened: string[];
} {
  const feeds = new Map<string, { push(e: AgentEvent | undefined): void }>();
  const opened: string[] = [];
  return {
    opened,
    push: (id, e) => feeds.get(id)?.push(e),
    end: (id) => feeds.get(id)?.push(undefined),
    async *follow(m, signal, accepted) {
      opened.push(`${m.id}@${m.endpoint}`);
      accepted?.();
      const queue: (AgentEvent | undefined)[] = [];
      let notify = (): void => undefined;
      feeds.set(m.id, {
        push: (e) => {
          queue.push(e);
          notify();
        },
      });
      for (;;) {
        if (queue.length === 0)
          await new Promise<void>((resolve) => {
            notify = resolve;
            signal.addEventListener(
              'abort',
              () => {
                resolve();
              },
              { once: true },
            );
          });
        if (signal.aborted) return;
        const e = queue.shift();
        if (e === undefined) return;
        yield e;
      }
    },
  };
}

async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !check(); i++) await sleep(5);
  assert.ok(check(), 'condition never held');
}

describe('the machine watch', () => {
  it('reconnects every retryMs through a reboot’s first seconds, then backs off to 20×', () => {
    const delays = Array.from({ length: 30 }, (_, i) => reconnectDelay(i + 1, 250));
    assert.deepEqual(
      delays.slice(0, 20),
      Array.from({ length: 20 }, () => 250),
    );
    assert.deepEqual(delays.slice(20, 26), [500, 1000, 2000, 4000, 5000, 5000]);
  });

  it('reports phases and results, not progress or log lines', async () => {
    const source = scriptedSource();
    const changes: [string, WatchChange][] = [];
    const watch = startMachineWatch(source, { onChange: (id, c) => changes.push([id, c]) });
    watch.track([machine('w-1')]);
    await until(() => source.opened.length === 1);
    source.push('w-1', event('progress', 'Pulling'));
    source.push('w-1', event('log', 'Pulling'));
    source.push('w-1', event('phase', 'Rebooting'));
    source.push('w-1', event('result', 'Idle'));
    await until(() => changes.length === 2);
    assert.deepEqual(changes, [
      ['w-1', { kind: 'event', phase: 'Rebooting' }],
      ['w-1', { kind: 'event', phase: 'Idle', result: 'Succeeded' }],
    ]);
    await watch.close();
  });

  it('says whether a stream is open and counts what it reported (opens, phases, losses)', async () => {
    const source = scriptedSource();
    const watch = startMachineWatch(source, { onChange: () => undefined, retryMs: 5 });
    assert.equal(watch.stream('w-1'), undefined, 'not followed');
    watch.track([machine('w-1')]);
    await until(() => watch.stream('w-1')?.open === true);
    assert.deepEqual(watch.stream('w-1'), { open: true, changes: 1 });
    source.push('w-1', event('progress', 'Pulling'));
    source.push('w-1', event('phase', 'Rebooting'));
    await until(() => watch.stream('w-1')?.changes === 2);
    source.end('w-1');
    await until(() => source.opened.length === 2 && watch.stream('w-1')?.open === true);
    assert.deepEqual(watch.stream('w-1'), { open: true, changes: 4 }, 'lost, then opened again');
    await watch.close();
  });

  it('reports a lost stream and follows the agent again when it is back', async () => {
    const source = scriptedSource();
    const changes: WatchChange[] = [];
    const watch = startMachineWatch(source, { onChange: (_, c) => changes.push(c), retryMs: 5 });
    watch.track([machine('w-1')]);
    await until(() => source.opened.length === 1);
    source.end('w-1');
    await until(() => source.opened.length === 2);
    assert.equal(changes[0]?.kind, 'lost');
    await until(() => changes.length === 2);
    assert.deepEqual(changes[1], { kind: 'reopened' }, 'a result may have come while it was away');
    source.push('w-1', event('phase', 'Committing'));
    await until(() => changes.length === 3);
    assert.deepEqual(changes[2], { kind: 'event', phase: 'Committing' });
    await watch.close();
  });

  it('follows registered machines, drops deregistered ones and re-follows a moved endpoint', async () => {
    const source = scriptedSource();
    const changes: string[] = [];
    const watch = startMachineWatch(source, { onChange: (id) => changes.push(id) });
    watch.track([machine('w-1'), machine('w-2')]);
    await until(() => source.opened.length === 2);
    watch.track([machine('w-2', 'https://10.0.0.9:7443'), machine('w-3')]);
    await until(() => source.opened.length === 4);
    assert.deepEqual(source.opened.slice(2).sort(), [
      'w-2@https://10.0.0.9:7443',
      'w-3@https://w-3:7443',
    ]);
    // Followers that were stopped report nothing, not even their end.
    await sleep(20);
    assert.deepEqual(changes, []);
    await watch.close();
    assert.deepEqual(changes, []);
  });
});
