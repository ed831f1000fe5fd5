// SPDX-License-Identifier: Apache-2.0
// The systemd units every molt image carries (deploy/image/rootfs), read by the host's systemd: a
// key in the wrong section is ignored at boot with only a journal line (emergency mode has no
// journal), so `SuccessAction=` under [Service] once left molt-emergency-reboot without its reboot.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { promisify } from 'node:util';

const run = promisify(execFile);
const units = join(import.meta.dirname, '../../deploy/image/rootfs/usr/lib/systemd/system');

/** What systemd says of a unit file, minus executables only the image has. */
async function verify(file: string): Promise<string[]> {
  const r = await run('systemd-analyze', ['verify', '--man=no', file]).catch((e: unknown) => {
    const x = e as { stdout?: string; stderr?: string };
    return { stdout: x.stdout ?? '', stderr: x.stderr ?? '' };
  });
  return `${r.stdout}${r.stderr}`
    .split('\n')
    .filter((l) => l.trim() !== '' && !/is not executable: No such file or directory/.test(l));
}

describe("the image's systemd units", () => {
  it('parse without a warning: every key in its section, every value valid', async () => {
    const files = (await readdir(units)).filter((f) => /\.(service|mount|target|timer)$/.test(f));
    assert.ok(files.includes('molt-emergency-reboot.service'), files.join(', '));
    for (const f of files) assert.deepEqual(await verify(join(units, f)), [], f);
  });
});
