// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ErrorCode, isMoltError } from '../../../core/errors.ts';
import { freePort } from '../../../platform/process/free-port.ts';
import type { Services } from '../../ports/services.ts';
import { createProcessService, servicesInOrder } from './index.ts';

function recorder(name: string, calls: string[]): Services {
  return {
    startAll: () => Promise.resolve(void calls.push(`start ${name}`)),
    stopAll: () => Promise.resolve(void calls.push(`stop ${name}`)),
    running: () => Promise.resolve([name]),
  };
}

describe('lab machine services', () => {
  it('start in order and stop in reverse: etcd before the API server that needs it', async () => {
    const calls: string[] = [];
    const all = servicesInOrder([recorder('etcd', calls), recorder('kube-apiserver', calls)]);
    await all.startAll();
    await all.stopAll();
    assert.deepEqual(calls, [
      'start etcd',
      'start kube-apiserver',
      'stop kube-apiserver',
      'stop etcd',
    ]);
    assert.deepEqual(await all.running(), ['etcd', 'kube-apiserver']);
  });

  it('refuses a service the firmware could not end at a reboot (no argument in the machine root)', () => {
    assert.throws(
      () =>
        createProcessService({
          root: '/lab/cp-1',
          name: 'kube-apiserver',
          binary: '/bin/true',
          args: ['--secure-port=6443'],
          port: 6443,
        }),
      (e: unknown) => isMoltError(e, ErrorCode.MachineInvalid),
    );
  });

  it('runs a process, finds it again, and stops it', async () => {
    const root = await mkdtemp(join(tmpdir(), 'molt-svc-'));
    const port = await freePort();
    const script = `require('net').createServer().listen(${String(port)}, '127.0.0.1')`;
    const service = createProcessService({
      root,
      name: 'listener',
      binary: process.execPath,
      args: ['-e', script, '--', `${root}/marker`],
      port,
    });
    try {
      await service.startAll();
      assert.deepEqual(await service.running(), ['listener']);
      await service.startAll(); // level-triggered: a running one is kept
      assert.deepEqual(await service.running(), ['listener']);
      await service.stopAll();
      assert.deepEqual(await service.running(), []);
    } finally {
      await service.stopAll();
      await rm(root, { recursive: true, force: true });
    }
  });
});
