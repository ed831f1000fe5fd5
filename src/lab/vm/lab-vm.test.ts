// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { tempDir } from '../../platform/process/managed-process.ts';
import {
  alive,
  readLabStateFile,
  writeLabState,
  type LabState,
  type LabVmRecord,
} from '../state.ts';
import { labVmDir, recordLabVm, stopLabVms } from './lab-vm.ts';

const lab = (dir: string): LabState => ({
  pid: process.pid,
  state: 'ready',
  startedAt: '2026-11-26T12:00:00.000Z',
  dir,
  registry: '127.0.0.1:5000',
  repository: 'molt/node',
  operator: { api: 'https://127.0.0.1:7443', dashboard: 'http://127.0.0.1:8080' },
  pki: join(dir, 'pki'),
  machines: [],
});

const record = (dir: string, name: string, pid: number): LabVmRecord => ({
  name,
  pid,
  dir: labVmDir(dir, name),
  serialLog: join(labVmDir(dir, name), 'serial.log'),
  accel: 'tcg',
  agentPort: 40001,
  endpoint: 'https://127.0.0.1:40001',
});

describe('lab VMs', () => {
  let dir: { path: string; remove: () => Promise<void> };
  before(async () => {
    dir = await tempDir('lab-vm');
  });
  after(() => dir.remove());

  it('are recorded in lab.json by name, a power-on replacing the old PID', async () => {
    await recordLabVm(dir.path, record(dir.path, 'vm-1', 100)); // no lab.json: nothing to record in
    assert.equal(await readLabStateFile(dir.path), undefined);
    await writeLabState(dir.path, lab(dir.path));
    await recordLabVm(dir.path, record(dir.path, 'vm-1', 100));
    await recordLabVm(dir.path, record(dir.path, 'vm-2', 200));
    await recordLabVm(dir.path, record(dir.path, 'vm-1', 101));
    const vms = (await readLabStateFile(dir.path))?.vms ?? [];
    assert.deepEqual(
      vms.map((v) => [v.name, v.pid]),
      [
        ['vm-2', 200],
        ['vm-1', 101],
      ],
    );
  });

  it('are stopped by PID only while that PID is still their QEMU', async () => {
    const other = spawn('sleep', ['60'], { stdio: 'ignore' });
    const pid = other.pid ?? -1;
    try {
      assert.deepEqual(await stopLabVms([record(dir.path, 'vm-1', pid)]), []);
      assert.ok(alive(pid), 'a reused PID is left alone');
    } finally {
      other.kill('SIGKILL');
    }
  });
});
