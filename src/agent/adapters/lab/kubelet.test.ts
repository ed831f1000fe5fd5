// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ErrorCode, isMoltError } from '../../../core/errors.ts';
import { MachineConfig } from '../../../protocol/machine-config.ts';
import { startKubeletFor } from './kubelet.ts';

const config = (kubernetes?: object) =>
  MachineConfig.parse({
    node: 'w-1',
    role: 'worker',
    bootloader: 'grub',
    ...(kubernetes !== undefined && { kubernetes }),
  });

describe('the lab kubelet', () => {
  const log = (): void => undefined;

  it('is not started for a machine without kubernetes.labKubelet', async () => {
    assert.equal(
      await startKubeletFor(config(), { lab: true, version: '1', bootId: 'b1', log }),
      undefined,
    );
    const kube = config({ kubeconfig: '/k' });
    assert.equal(
      await startKubeletFor(kube, { lab: true, version: '1', bootId: 'b1', log }),
      undefined,
    );
  });

  it('refuses to play the kubelet on a real machine, before touching anything', async () => {
    const kube = config({ kubeconfig: '/k', labKubelet: { kubeconfig: '/nonexistent' } });
    await assert.rejects(
      startKubeletFor(kube, { lab: false, version: '1', bootId: 'b1', log }),
      (e: unknown) =>
        isMoltError(e, ErrorCode.MachineInvalid) && /lab machines only/.test(e.message),
    );
  });
});
