// SPDX-License-Identifier: Apache-2.0
// The partition sizes `molt install` lays out: a control plane's STATE is large enough for its
// Kubernetes bundles unless a size is given.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ControlPlaneStateBytes, DefaultSizes } from '../../core/disk/layout.ts';
import type { MachineConfig } from '../../protocol/machine-config.ts';
import { layoutSizes } from './install-disk.ts';

const MiB = 1024 * 1024;
const controlPlane = { binaries: '/opt/kube', components: {} } as MachineConfig['controlPlane'];

describe('the sizes molt install lays out', () => {
  it('gives a control plane a STATE of 1 GiB, room for the bundle it runs and the next', () => {
    assert.equal(layoutSizes({ controlPlane }, undefined).state, ControlPlaneStateBytes);
    assert.ok(ControlPlaneStateBytes >= 2 * 300 * MiB);
  });

  it('keeps the default STATE elsewhere, and any size given as given', () => {
    assert.deepEqual(layoutSizes({}, undefined), DefaultSizes);
    assert.equal(layoutSizes({ controlPlane }, { state: 256 * MiB }).state, 256 * MiB);
    assert.equal(layoutSizes({ controlPlane }, { slot: 512 * MiB }).slot, 512 * MiB);
  });
});
