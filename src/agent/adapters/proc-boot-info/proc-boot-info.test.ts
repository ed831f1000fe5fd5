// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { ErrorCode, isMoltError } from '../../../core/errors.ts';
import { LabEnv } from '../../../protocol/agent.ts';
import { readLabBootInfo } from '../lab/boot-info.ts';
import { readProcBootInfo } from './index.ts';

const dirs: string[] = [];
after(() => Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true }))));

/** A stand-in for /proc with the two files the agent reads. */
async function proc(cmdline: string, bootId: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'molt-proc-'));
  dirs.push(dir);
  await mkdir(join(dir, 'sys', 'kernel', 'random'), { recursive: true });
  await writeFile(join(dir, 'cmdline'), `${cmdline}\n`);
  await writeFile(join(dir, 'sys', 'kernel', 'random', 'boot_id'), `${bootId}\n`);
  return dir;
}

describe('boot facts', () => {
  it('on a real machine: the slot the boot entry named on the kernel command line, the boot id', async () => {
    const dir = await proc(
      'BOOT_IMAGE=/molt/b/vmlinuz root=PARTLABEL=slot-b ro molt.slot=B quiet',
      'f00d',
    );
    assert.deepEqual(await readProcBootInfo(dir, []), { bootId: 'f00d', slot: 'B' });
  });

  it('refuses a boot that did not come through a molt entry, naming the command line', async () => {
    const dir = await proc('root=/dev/sda1 molt.slot=C', 'f00d');
    await assert.rejects(
      readProcBootInfo(dir, []),
      (e) => isMoltError(e, ErrorCode.MachineInvalid) && e.message.includes('molt.slot=C'),
    );
  });

  it('with the log of the newest earlier boot that panicked, from systemd-pstore’s archive or pstore itself', async () => {
    const dir = await proc('molt.slot=A', 'f00d');
    const archive = join(dir, 'archive');
    const live = join(dir, 'pstore');
    // systemd-pstore's layout: a directory per record, its parts inside.
    await mkdir(join(archive, '1764680000000000', '001'), { recursive: true });
    await mkdir(live);
    const older = join(archive, '1764680000000000', '001', 'dmesg.txt');
    await writeFile(
      older,
      'Oops#1 Part1\n<0>[ 1.2] Kernel panic - not syncing: No working init found.\n',
    );
    await utimes(older, new Date(1_000_000), new Date(1_000_000));
    await writeFile(
      join(live, 'dmesg-efi-176468000000001'),
      'Panic#1 Part1\n<3>[ 3.4] device-mapper: verity: 254:0: data block 0 is corrupted\n<0>[ 3.4] Kernel panic - not syncing: dm-verity device corrupted\n',
    );
    // Not a panic, and not a kernel log: neither is the crash.
    await writeFile(
      join(live, 'dmesg-efi-176468000000002'),
      'Oops#1 Part1\n<4>[ 90.0] BUG: soft lockup\n',
    );
    await writeFile(join(live, 'console-ramoops-0'), 'Kernel panic - not syncing: elsewhere\n');
    const info = await readProcBootInfo(dir, [archive, live]);
    assert.match(info.crash ?? '', /data block 0 is corrupted[\s\S]*Kernel panic/);
    assert.deepEqual(await readProcBootInfo(dir, [archive]), {
      bootId: 'f00d',
      slot: 'A',
      crash: 'Oops#1 Part1\n<0>[ 1.2] Kernel panic - not syncing: No working init found.\n',
    });
    // No pstore on this machine (BIOS, or no record): no crash, no error.
    assert.equal((await readProcBootInfo(dir, [join(dir, 'none')])).crash, undefined);
  });

  it('under the lab firmware: the same facts from the environment it sets', () => {
    const env = { [LabEnv.Cmdline]: 'molt.slot=A', [LabEnv.BootId]: 'b1' };
    assert.deepEqual(readLabBootInfo(env), { bootId: 'b1', slot: 'A' });
    assert.throws(
      () => readLabBootInfo({ [LabEnv.Cmdline]: 'molt.slot=A' }),
      (e) => isMoltError(e, ErrorCode.MachineInvalid),
    );
  });
});
