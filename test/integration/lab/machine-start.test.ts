// SPDX-License-Identifier: Apache-2.0
// How the lab waits for its machines to come up, with a stand-in for `molt lab machine` (a Node
// script given as the lab's molt argv): a machine that is still starting on a busy computer — it
// keeps printing, and writes run/agent.json only after the 60 s the lab used to allow — is waited
// for; one that dies at once is reported at once, by name, with its last lines and
// MOLT_LAB_FAILED; and a control-plane cluster with a member that dies fails the same way, never
// with an unhandled rejection or a bare Error that the CLI prints as a stack trace.
import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { describeError } from '../../../src/cli/errors.ts';
import { ErrorCode, isMoltError } from '../../../src/core/errors.ts';
import { runLab } from '../../../src/lab/main.ts';
import { tempDir } from '../../../src/platform/process/managed-process.ts';
import { startControlPlaneCluster } from '../../../src/lab/fleet/control-plane.ts';
import { startLabMachine, type FleetPki, type LabMachine } from '../../../src/lab/fleet/machine.ts';

/**
 * Plays `molt lab machine --root ROOT …`: if `ROOT.die` exists it prints its lines and exits 3;
 * otherwise it prints a step every 2 s and writes run/agent.json after `ROOT.delay` seconds.
 */
const standIn = `
const fs = require('node:fs');
const path = require('node:path');
const root = process.argv[process.argv.indexOf('--root') + 1];
if (fs.existsSync(root + '.die')) {
  for (let i = 1; i <= 30; i++) console.error('init step ' + i);
  console.error('fatal: the machine config is not valid');
  process.exit(3);
}
const delay = Number(fs.readFileSync(root + '.delay', 'utf8')) * 1000;
let n = 0;
const steps = setInterval(() => console.log('lab firmware: still starting, step ' + ++n), 2000);
setTimeout(() => {
  clearInterval(steps);
  fs.mkdirSync(path.join(root, 'run'), { recursive: true });
  fs.writeFileSync(path.join(root, 'run', 'agent.json'), JSON.stringify({ url: 'https://127.0.0.1:1', bootId: 'b1' }));
  console.log('molt agent: listening');
}, delay);
setInterval(() => {}, 1000);
`;

let scratch: { path: string; remove: () => Promise<void> };
let molt: string[];
const pki: FleetPki = { dir: '/nonexistent', operatorEnv: {} };
const machines: LabMachine[] = [];

before(async () => {
  scratch = await tempDir('machine-start');
  const script = join(scratch.path, 'stand-in.cjs');
  await writeFile(script, standIn);
  molt = [process.execPath, script];
});

after(async () => {
  for (const m of machines) await m.stop();
  await scratch.remove();
});

async function machine(
  name: string,
  how: { die: true } | { delaySeconds: number },
): Promise<LabMachine> {
  const root = join(scratch.path, name);
  if ('die' in how) await writeFile(`${root}.die`, '');
  else await writeFile(`${root}.delay`, String(how.delaySeconds));
  const m = startLabMachine({ root, bootloader: 'grub', pki, image: 'unused', molt });
  machines.push(m);
  return m;
}

describe('a lab machine coming up', () => {
  it('is waited for while it keeps working, past the 60 s the lab used to allow', async () => {
    const m = await machine('w-1', { delaySeconds: 65 });
    const t0 = performance.now();
    const agent = await m.agent();
    assert.equal(agent.bootId, 'b1');
    assert.ok(performance.now() - t0 > 60_000);
  });

  it('that dies at once is reported at once, by name, with its last lines', async () => {
    const m = await machine('w-2', { die: true });
    const t0 = performance.now();
    await assert.rejects(m.status(), (e: unknown) => {
      assert.ok(isMoltError(e, ErrorCode.LabFailed), String(e));
      assert.match(e.message, /^w-2 did not come up: .* exited \(code 3\) before it was ready/);
      assert.match(e.message, /fatal: the machine config is not valid/);
      assert.match(e.message, /init step 30/);
      return true;
    });
    assert.ok(performance.now() - t0 < 10_000, 'not after a deadline');
  });
});

describe('a control-plane cluster whose member dies at once', () => {
  it('fails with MOLT_LAB_FAILED naming the member, and leaves no unhandled rejection', async () => {
    const dir = join(scratch.path, 'cluster');
    await mkdir(dir);
    for (const name of ['cp-1', 'cp-3']) await writeFile(join(dir, `${name}.delay`), '600');
    await writeFile(join(dir, 'cp-2.die'), '');
    const unhandled: unknown[] = [];
    const record = (reason: unknown): void => {
      unhandled.push(reason);
    };
    process.on('unhandledRejection', record);
    try {
      await assert.rejects(
        startControlPlaneCluster({ molt, dir, pki, image: 'unused' }),
        (e: unknown) => {
          assert.ok(isMoltError(e, ErrorCode.LabFailed), String(e));
          assert.match(
            e.message,
            /^the control-plane cluster did not come up: .*cp-2 exited \(code 3\)/,
          );
          assert.match(e.message, /fatal: the machine config is not valid/);
          return true;
        },
      );
      // Rejections surface after the stop: give them a few turns of the event loop.
      await new Promise((r) => setTimeout(r, 500));
      assert.deepEqual(unhandled, []);
    } finally {
      process.off('unhandledRejection', record);
    }
  });
});

describe('molt lab run whose control-plane machines die at once', () => {
  it('ends with MOLT_LAB_FAILED, which the CLI prints without a stack trace', async () => {
    const dir = join(scratch.path, 'lab');
    await mkdir(join(dir, 'fleet'), { recursive: true });
    for (const name of ['cp-1', 'cp-2', 'cp-3'])
      await writeFile(join(dir, 'fleet', `${name}.die`), '');
    const io = { out: () => undefined, err: () => undefined };
    const argv = [
      'run',
      '--dir',
      dir,
      '--workers',
      '1',
      '--no-kubernetes',
      '--network',
      'loopback',
    ];
    await assert.rejects(runLab(argv, io, molt), (e: unknown) => {
      assert.ok(isMoltError(e, ErrorCode.LabFailed), String(e));
      const printed = describeError(e);
      assert.match(
        printed,
        /^error MOLT_LAB_FAILED: the control-plane cluster did not come up: cp-\d exited/,
      );
      assert.match(printed, /fatal: the machine config is not valid/);
      assert.doesNotMatch(printed, /\n\s+at /, 'no stack trace');
      return true;
    });
  });
});
