// SPDX-License-Identifier: Apache-2.0
// `npm run demo -- …` with a flag it does not take: a clear MOLT_BAD_FLAG, never a Node
// stack trace, and every flag is checked before the demo touches anything — here a lab "running"
// in a directory of its own (its daemon a `sleep` this test started), which must stay running.
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { access } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { tempDir } from '../../src/platform/process/managed-process.ts';
import { alive, labFile, writeLabState } from '../../src/lab/state.ts';

const demo = join(import.meta.dirname, '../../scripts/demo.ts');

function runDemo(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [demo, ...args], { timeout: 60_000 }, (error, stdout, stderr) => {
      resolve({ code: error === null ? 0 : Number(error.code ?? -1), stdout, stderr });
    });
  });
}

describe('npm run demo with a bad flag', () => {
  let scratch: { path: string; remove: () => Promise<void> };
  let daemon: ReturnType<typeof spawn>;

  before(async () => {
    scratch = await tempDir('demo-flags');
    daemon = spawn('sleep', ['300'], { stdio: 'ignore' });
    await once(daemon, 'spawn');
    await writeLabState(scratch.path, {
      pid: daemon.pid ?? 0,
      state: 'ready',
      startedAt: new Date().toISOString(),
      dir: scratch.path,
      registry: '127.0.0.1:5000',
      repository: 'molt/installer',
      operator: { api: 'https://127.0.0.1:7443', dashboard: 'http://127.0.0.1:7080' },
      pki: join(scratch.path, 'pki'),
      machines: [],
    });
  });
  after(async () => {
    daemon.kill('SIGKILL');
    await scratch.remove();
  });

  it('says MOLT_BAD_FLAG for an unknown flag, without a stack trace', async () => {
    const r = await runDemo('--bogus');
    assert.equal(r.code, 1);
    assert.match(r.stderr, /^error MOLT_BAD_FLAG: Unknown option '--bogus'/);
    assert.match(r.stderr, /hint: npm run demo -- \[--fast\]/);
    assert.doesNotMatch(r.stderr, /\n\s+at /);
  });

  it('refuses --network bogus before stopping the lab already running', async () => {
    const r = await runDemo('--network', 'bogus', '--dir', scratch.path);
    assert.equal(r.code, 1);
    assert.match(
      r.stderr,
      /^error MOLT_BAD_FLAG: --network must be auto, netns or loopback, not "bogus"/,
    );
    assert.doesNotMatch(r.stdout, /stopping it first/);
    assert.ok(alive(daemon.pid ?? 0), 'the lab daemon still runs');
    await access(labFile(scratch.path));
  });
});
