// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { describe, it } from 'node:test';
import { runQueueWaitMs, treeCpuMs } from './cpu-time.ts';

describe('a process’s time from /proc', () => {
  it('counts the CPU a busy child used, and nothing for a process that is gone', async () => {
    const child = spawn(process.execPath, [
      '-e',
      'const t = Date.now(); while (Date.now() - t < 600);',
    ]);
    const exited = once(child, 'exit');
    await new Promise((r) => setTimeout(r, 400));
    const used = await treeCpuMs(child.pid ?? -1);
    const waited = await runQueueWaitMs(child.pid ?? -1);
    await exited;
    assert.ok(used >= 100, `the spinning child used CPU: ${String(used)} ms`);
    assert.ok(Number.isInteger(waited) && waited >= 0, `a run-queue wait in ms: ${String(waited)}`);
    assert.equal(await treeCpuMs(child.pid ?? -1), 0, 'gone');
    assert.equal(await runQueueWaitMs(child.pid ?? -1), 0, 'gone');
  });
});
