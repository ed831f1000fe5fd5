// SPDX-License-Identifier: Apache-2.0
// The lab's services by name: started and stopped through the Services the agent composes, seen
// through their PID and log files (`<root>/run/<name>.pid|.log`).
import assert from 'node:assert/strict';
import { appendFile, mkdir, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ErrorCode } from '../../../core/errors.ts';
import { tempDir } from '../../../platform/process/managed-process.ts';
import type { Services } from '../../ports/services.ts';
import { createLabServiceControl } from './index.ts';
import { lastLines, logLines } from './log-file.ts';

/** A service that only records: `running()` is what the test set. */
function recorded(name: string, calls: string[]): Services & { up: boolean } {
  const s = {
    up: false,
    running: () => Promise.resolve(s.up ? [name] : []),
    startAll() {
      calls.push(`start ${name}`);
      s.up = true;
      return Promise.resolve();
    },
    stopAll() {
      calls.push(`stop ${name}`);
      s.up = false;
      return Promise.resolve();
    },
  };
  return s;
}

async function collect(lines: AsyncIterable<string>): Promise<string[]> {
  const out: string[] = [];
  for await (const l of lines) out.push(l);
  return out;
}

describe('lab service control', () => {
  let root: { path: string; remove(): Promise<void> };
  before(async () => {
    root = await tempDir('lab-service-control');
    await mkdir(join(root.path, 'run'));
  });
  after(async () => {
    await root.remove();
  });

  it('lists, starts, stops and restarts through the composed services; PID from the PID file', async () => {
    const calls: string[] = [];
    const etcd = recorded('etcd', calls);
    const apiserver = recorded('kube-apiserver', calls);
    const control = createLabServiceControl({
      root: root.path,
      services: [
        { name: 'etcd', service: etcd },
        { name: 'kube-apiserver', service: apiserver },
      ],
    });
    etcd.up = true;
    await writeFile(join(root.path, 'run', 'etcd.pid'), '4242\n');
    const [e, a] = await control.list();
    assert.ok(e);
    assert.equal(e.name, 'etcd');
    assert.equal(e.running, true);
    assert.equal(e.pid, 4242);
    assert.ok(e.since !== undefined && !Number.isNaN(Date.parse(e.since)));
    assert.deepEqual(a, { name: 'kube-apiserver', running: false });
    assert.equal((await control.start('kube-apiserver')).running, true);
    assert.equal((await control.stop('etcd')).running, false);
    await control.restart('kube-apiserver');
    assert.deepEqual(calls, [
      'start kube-apiserver',
      'stop etcd',
      'stop kube-apiserver',
      'start kube-apiserver',
    ]);
  });

  it('refuses a name it does not run with MOLT_SERVICE_NOT_FOUND, naming those it does', async () => {
    const control = createLabServiceControl({
      root: root.path,
      services: [{ name: 'etcd', service: recorded('etcd', []) }],
    });
    await assert.rejects(control.stop('kube-scheduler'), (e: { code: string; hint: string }) => {
      assert.equal(e.code, ErrorCode.ServiceNotFound);
      assert.match(e.hint, /etcd/);
      return true;
    });
    await assert.rejects(
      control.logs('../etc/passwd', {
        tail: 1,
        follow: false,
        signal: new AbortController().signal,
      }),
      { code: ErrorCode.ServiceNotFound },
    );
  });

  it('reads the last lines of a log larger than its read chunks, and of a missing one', async () => {
    const file = join(root.path, 'run', 'big.log');
    const lines = Array.from({ length: 20_000 }, (_, i) => `line ${String(i)} ${'x'.repeat(20)}`);
    await writeFile(file, `${lines.join('\n')}\n`);
    const size = lines.join('\n').length + 1;
    assert.deepEqual(await lastLines(file, 3, size), lines.slice(-3));
    assert.deepEqual(await lastLines(file, 5000, size), lines.slice(-5000));
    assert.deepEqual(await lastLines(file, 0, size), []);
    await writeFile(file, 'a\nb\nno newline at the end');
    assert.deepEqual(await lastLines(file, 2, 25), ['b', 'no newline at the end']);
    assert.deepEqual(await lastLines(join(root.path, 'run', 'none.log'), 10, 0), []);
  });

  it('follows what is appended (a line split across writes once whole), a truncated log from its start', async () => {
    const file = join(root.path, 'run', 'follow.log');
    await writeFile(file, 'old 1\nold 2\n');
    const stop = new AbortController();
    const seen: string[] = [];
    const reading = (async () => {
      for await (const l of logLines(file, {
        tail: 1,
        follow: true,
        signal: stop.signal,
        pollMs: 20,
      })) {
        seen.push(l);
        if (seen.length === 4) stop.abort();
      }
    })();
    const until = async (n: number): Promise<void> => {
      while (seen.length < n) await new Promise((r) => setTimeout(r, 10));
    };
    await until(1);
    await appendFile(file, 'new 1\nhalf ');
    await until(2);
    await appendFile(file, 'line\n');
    await until(3);
    await truncate(file, 0);
    await new Promise((r) => setTimeout(r, 60));
    await appendFile(file, 'after truncate\n');
    await reading;
    assert.deepEqual(seen, ['old 2', 'new 1', 'half line', 'after truncate']);
  });

  it('ends a followed log when its signal aborts, and a plain one at once', async () => {
    const file = join(root.path, 'run', 'quiet.log');
    await writeFile(file, 'only\n');
    assert.deepEqual(
      await collect(
        logLines(file, { tail: 10, follow: false, signal: new AbortController().signal }),
      ),
      ['only'],
    );
    const stop = new AbortController();
    setTimeout(() => {
      stop.abort();
    }, 50);
    assert.deepEqual(
      await collect(logLines(file, { tail: 0, follow: true, signal: stop.signal, pollMs: 10 })),
      [],
    );
  });
});
