// SPDX-License-Identifier: Apache-2.0
// Waiting for a started process by its progress, with real child processes: one that keeps
// printing or computing while it starts is waited for past the quiet time, one that is alive but
// idle is given up, and one that exits is reported at once with its last lines and a stable code.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ErrorCode, isMoltError } from '../../core/errors.ts';
import { startProcess, tempDir, type ManagedProcess } from './managed-process.ts';
import { waitReady } from './readiness.ts';

let scratch: { path: string; remove: () => Promise<void> };
const started: ManagedProcess[] = [];

before(async () => {
  scratch = await tempDir('readiness');
});

after(async () => {
  for (const p of started) await p.stop(1_000);
  await scratch.remove();
});

/** A Node child running `script`, with `READY` the file it may write once ready. */
function child(name: string, script: string): { p: ManagedProcess; ready: string } {
  const ready = join(scratch.path, `${name}.ready`);
  const p = startProcess(name, process.execPath, ['-e', `${READY_FN}\n${script}`], {
    env: { ...process.env, READY: ready },
  });
  started.push(p);
  return { p, ready };
}

const readyFile = (ready: string) => () => readFile(ready, 'utf8');

/**
 * The children's `ready()`: writes READY whole, by rename, so a probe never reads the file between
 * its creation and its write (an empty value).
 */
const READY_FN = `const ready = () => { const fs = require('fs'); fs.writeFileSync(process.env.READY + '.tmp', 'up'); fs.renameSync(process.env.READY + '.tmp', process.env.READY); };`;

describe('waitReady', () => {
  it('waits past the quiet time for a process that keeps printing while it starts', async () => {
    const { p, ready } = child(
      'printer',
      `let n = 0;
       const t = setInterval(() => console.log('step ' + ++n), 200);
       setTimeout(() => { clearInterval(t); ready(); }, 5000);
       setInterval(() => {}, 1000);`,
    );
    const t0 = performance.now();
    const value = await waitReady({
      what: 'printer',
      processes: [p],
      probe: readyFile(ready),
      // Twice the quiet time in all, with room for a child's start on a busy machine.
      quietMs: 2_000,
      cpuMs: 60_000,
    });
    assert.equal(value, 'up');
    assert.ok(performance.now() - t0 > 4_500, 'it took longer than twice the quiet time');
  });

  it('counts CPU time as progress for a process that computes without printing', async () => {
    const { p, ready } = child(
      'computer',
      `const end = Date.now() + 6000; while (Date.now() < end) Math.sqrt(Math.random());
       ready();
       setInterval(() => {}, 1000);`,
    );
    const value = await waitReady({
      what: 'computer',
      processes: [p],
      probe: readyFile(ready),
      // A busy loop gets a share of a core even on a loaded machine: 200 ms every 3 s.
      quietMs: 3_000,
      cpuMs: 200,
    });
    assert.equal(value, 'up');
  });

  it('gives up on a live process that makes no progress, naming it and why', async () => {
    const { p, ready } = child(
      'sleeper',
      `console.log('waiting for nothing'); setInterval(() => {}, 1000);`,
    );
    await p.waitFor(/waiting for nothing/);
    const t0 = performance.now();
    await assert.rejects(
      waitReady({ what: 'sleeper', processes: [p], probe: readyFile(ready), quietMs: 1_000 }),
      (e: unknown) => {
        assert.ok(isMoltError(e, ErrorCode.LabFailed), String(e));
        assert.match(e.message, /^sleeper did not come up: no progress for 1 s/);
        assert.match(e.message, /ENOENT/);
        assert.match(e.message, /waiting for nothing/);
        return true;
      },
    );
    assert.ok(performance.now() - t0 < 5_000);
  });

  it('reports a process that exits at once, with its last lines, without waiting', async () => {
    const { p, ready } = child(
      'quitter',
      `for (let i = 1; i <= 30; i++) console.error('line ' + i); console.error('fatal: bad config'); process.exit(3);`,
    );
    const t0 = performance.now();
    await assert.rejects(
      waitReady({ what: 'w-9', processes: [p], probe: readyFile(ready), quietMs: 60_000 }),
      (e: unknown) => {
        assert.ok(isMoltError(e, ErrorCode.LabFailed), String(e));
        assert.match(
          e.message,
          /^w-9 did not come up: quitter exited \(code 3\) before it was ready/,
        );
        assert.match(e.message, /fatal: bad config/);
        assert.match(e.message, /line 30/);
        assert.doesNotMatch(e.message, /line 1\n/, 'only the tail of the log');
        return true;
      },
    );
    assert.ok(performance.now() - t0 < 5_000);
  });
});
