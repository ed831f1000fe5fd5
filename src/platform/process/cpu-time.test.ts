// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { describe, it } from 'node:test';
import { runQueueWaitMs, treeCpuMs } from './cpu-time.ts';

describe('a process’s time from /proc', () => {
  it('counts the CPU a busy child used, and nothing for a process that is gone', async () => {
    // The child spins until it has used 200 ms of CPU by its own count, says so, and stays alive
    // until its stdin closes: on a loaded host a fixed wait could end before it had run at all.
    const child = spawn(
      process.execPath,
      [
        '-e',
        `while (process.cpuUsage().user + process.cpuUsage().system < 200_000);
         process.stdout.write('spun\\n');
         process.stdin.resume();
         process.stdin.on('end', () => process.exit(0));`,
      ],
      { stdio: ['pipe', 'pipe', 'inherit'] },
    );
    const exited = once(child, 'exit');
    await once(child.stdout, 'data');
    const used = await treeCpuMs(child.pid ?? -1);
    const waited = await runQueueWaitMs(child.pid ?? -1);
    child.stdin.end();
    await exited;
    assert.ok(used >= 100, `the spinning child used CPU: ${String(used)} ms`);
    assert.ok(Number.isInteger(waited) && waited >= 0, `a run-queue wait in ms: ${String(waited)}`);
    assert.equal(await treeCpuMs(child.pid ?? -1), 0, 'gone');
    assert.equal(await runQueueWaitMs(child.pid ?? -1), 0, 'gone');
  });
});
