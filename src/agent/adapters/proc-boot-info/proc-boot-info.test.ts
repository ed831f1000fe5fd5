// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
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
    assert.deepEqual(await readProcBootInfo(dir), { bootId: 'f00d', slot: 'B' });
  });

  it('refuses a boot that did not come through a molt entry, naming the command line', async () => {
    const dir = await proc('root=/dev/sda1 molt.slot=C', 'f00d');
    await assert.rejects(
      readProcBootInfo(dir),
      (e) => isMoltError(e, ErrorCode.MachineInvalid) && e.message.includes('molt.slot=C'),
    );
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
