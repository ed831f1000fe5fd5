// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { appendFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { isMoltError } from '../../core/errors.ts';
import { tempDir } from '../../platform/process/managed-process.ts';
import { lastLine, serialSize, waitForSerial } from './serial-log.ts';

describe('the serial log', () => {
  let dir: { path: string; remove: () => Promise<void> };
  let log: string;
  before(async () => {
    dir = await tempDir('serial-log');
    log = join(dir.path, 'serial.log');
    await writeFile(log, '=== molt vm: power on 1 ===\nBOOT n=1\n\x1b[2Jnoise\r\nBOOT n=2\n');
  });
  after(() => dir.remove());

  it('finds the Nth match, with its offset in the whole log', async () => {
    const m = await waitForSerial(log, /BOOT n=(\d)/, {
      name: 't',
      deadlineMs: 1000,
      occurrence: 2,
    });
    assert.equal(m[1], '2');
    const from = m.index + m[0].length;
    await appendFile(log, 'BOOT n=3\n');
    const next = await waitForSerial(log, /BOOT n=(\d)/, { name: 't', deadlineMs: 1000, from });
    assert.equal(next[1], '3');
    assert.equal(next.index, (await serialSize(log)) - 'BOOT n=3\n'.length);
  });

  it('waits for text written later', async () => {
    const from = await serialSize(log);
    const waiting = waitForSerial(log, /LATER/, { name: 't', deadlineMs: 5000, from });
    await appendFile(log, 'LATER\n');
    assert.equal((await waiting)[0], 'LATER');
  });

  it('rejects at the deadline with the log’s tail, or at once when the VM is off', async () => {
    await assert.rejects(
      waitForSerial(log, /NEVER/, { name: 'vm-1', deadlineMs: 200 }),
      (e: unknown) =>
        isMoltError(e, 'MOLT_VM_FAILED') && /not within 200 ms[\s\S]*BOOT n=2/.test(e.message),
    );
    const started = performance.now();
    await assert.rejects(
      waitForSerial(log, /NEVER/, { name: 'vm-1', deadlineMs: 60_000, stopped: () => true }),
      /the VM is off/,
    );
    assert.ok(performance.now() - started < 5_000);
  });

  it('waits past the deadline for as long as the host kept the guest from a CPU', async () => {
    const from = await serialSize(log);
    const started = performance.now();
    const waiting = waitForSerial(log, /SLOW BOOT/, {
      name: 'vm-1',
      deadlineMs: 200,
      from,
      // Fully starved: every millisecond waited, the guest waited for a CPU.
      starvedMs: () => Promise.resolve(Math.round(performance.now() - started)),
    });
    await sleep(400); // past the deadline, within three times it
    await appendFile(log, 'SLOW BOOT\n');
    assert.equal((await waiting)[0], 'SLOW BOOT');
  });

  it('gives up at the deadline on a guest that could run (or is paused), and at three times it on a starved one', async () => {
    await assert.rejects(
      waitForSerial(log, /NEVER/, {
        name: 'vm-1',
        deadlineMs: 200,
        starvedMs: () => Promise.resolve(7),
      }),
      (e: unknown) =>
        isMoltError(e, 'MOLT_VM_FAILED') && /: not within 200 ms; the console/.test(e.message),
    );
    const started = performance.now();
    await assert.rejects(
      waitForSerial(log, /NEVER/, {
        name: 'vm-1',
        deadlineMs: 200,
        starvedMs: () => Promise.resolve(Math.round(performance.now() - started)),
      }),
      (e: unknown) =>
        isMoltError(e, 'MOLT_VM_FAILED') &&
        /not within \d+ ms \(200 ms, and 400 ms the host kept its CPU from the guest\)/.test(
          e.message,
        ),
    );
    assert.ok(performance.now() - started >= 600, 'a starved guest gets three times the deadline');
  });

  it('shows the last console line without terminal escapes', async () => {
    await appendFile(log, '\x1b[0mlogin: \r\n\n');
    assert.equal(await lastLine(log), 'login:');
    assert.equal(await lastLine(join(dir.path, 'missing.log')), '');
  });
});
