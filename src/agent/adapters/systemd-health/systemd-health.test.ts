// SPDX-License-Identifier: Apache-2.0
// systemd health against a FAKE systemctl (src/testkit/systemctl-standin.ts): no machine here runs
// systemd as PID 1; the VM tests run these checks against real systemd.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  createSystemctlStandIn,
  type SystemctlStandIn,
} from '../../../testkit/systemctl-standin.ts';
import { createSystemctl } from '../systemd-units/index.ts';
import { systemdSystemHealth, systemdUnitsHealth } from './index.ts';

describe('systemd health (FAKE systemctl)', () => {
  let fake: SystemctlStandIn;
  const signal = new AbortController().signal;
  before(async () => {
    fake = await createSystemctlStandIn({
      'kubelet.service': 'active',
      'containerd.service': 'active',
    });
  });
  after(() => fake.remove());

  it('passes a running system and fails a starting or degraded one, naming failed units', async () => {
    const check = systemdSystemHealth(createSystemctl(fake.path));
    assert.deepEqual(await check.run(signal), {
      name: 'systemd',
      status: 'ok',
      message: 'running',
    });
    await fake.setSystem('starting');
    assert.deepEqual(await check.run(signal), {
      name: 'systemd',
      status: 'failing',
      message: 'still starting (starting)',
    });
    await fake.setSystem('degraded');
    await fake.setUnit('containerd.service', 'failed');
    assert.deepEqual(await check.run(signal), {
      name: 'systemd',
      status: 'failing',
      message: 'degraded: failed containerd.service',
    });
    await fake.setSystem('running');
    await fake.setUnit('containerd.service', 'active');
  });

  it('wants every unit of the role active', async () => {
    const units = () => Promise.resolve(['containerd.service', 'kubelet.service']);
    const check = systemdUnitsHealth(createSystemctl(fake.path), units);
    assert.equal((await check.run(signal)).status, 'ok');
    await fake.setUnit('kubelet.service', 'inactive');
    assert.deepEqual(await check.run(signal), {
      name: 'systemd-units',
      status: 'failing',
      message: 'kubelet.service inactive',
    });
    const none = systemdUnitsHealth(createSystemctl(fake.path), () => Promise.resolve([]));
    assert.equal((await none.run(signal)).status, 'skipped');
    await fake.setUnit('kubelet.service', 'active');
  });

  it('passes a unit its own condition kept from starting (a node runtime without a node config)', async () => {
    const systemctl = createSystemctl(fake.path);
    const units = () => Promise.resolve(['containerd.service', 'kubelet.service']);
    const check = systemdUnitsHealth(systemctl, units);
    await fake.failCondition('kubelet.service', true);
    await fake.setUnit('kubelet.service', 'inactive');
    assert.equal((await check.run(signal)).status, 'failing', 'inactive, and never started');
    await systemctl.run(['start', 'kubelet.service']);
    assert.equal(await fake.unitState('kubelet.service'), 'inactive');
    assert.deepEqual(await check.run(signal), {
      name: 'systemd-units',
      status: 'ok',
      message: 'containerd.service active; kubelet.service not started (a condition is false)',
    });
    await fake.setUnit('kubelet.service', 'failed');
    assert.equal((await check.run(signal)).status, 'failing', 'a failed unit still fails');
    await fake.failCondition('kubelet.service', false);
    await fake.setUnit('kubelet.service', 'active');
  });
});
