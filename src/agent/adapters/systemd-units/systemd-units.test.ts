// SPDX-License-Identifier: Apache-2.0
// The systemd units adapter against a FAKE systemctl (src/testkit/systemctl-standin.ts): no
// machine here runs systemd as PID 1. The VM tests run it against real systemd.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { ErrorCode } from '../../../core/errors.ts';
import { tempDir } from '../../../platform/process/managed-process.ts';
import { rejectsWithCode } from '../../../testkit/registry-conformance.ts';
import { servicesConformance } from '../../../testkit/services-conformance.ts';
import {
  createSystemctlStandIn,
  type SystemctlStandIn,
} from '../../../testkit/systemctl-standin.ts';
import { createSystemdEtcdService, etcdEnvironment, etcdUnitDropIn } from './etcd-unit.ts';
import { createSystemctl, createSystemdUnits, defaultUnits } from './index.ts';

servicesConformance('systemd units (FAKE systemctl)', async () => {
  const names = ['containerd.service', 'kubelet.service'];
  const fake = await createSystemctlStandIn({
    'containerd.service': 'active',
    'kubelet.service': 'active',
  });
  const services = createSystemdUnits({
    units: names,
    systemctl: createSystemctl(fake.path),
    stopTimeoutMs: 300,
  });
  return {
    services,
    names,
    jam: (unit, on) => fake.jam(unit, on),
    close: () => fake.remove(),
  };
});

describe('systemd units (FAKE systemctl)', () => {
  const fakes: SystemctlStandIn[] = [];
  const standIn = async (
    units: Parameters<typeof createSystemctlStandIn>[0],
  ): Promise<SystemctlStandIn> => {
    const f = await createSystemctlStandIn(units);
    fakes.push(f);
    return f;
  };
  after(async () => {
    for (const f of fakes) await f.remove();
  });

  it('stops newest first, starts in order, and skips units the machine does not have', async () => {
    const fake = await standIn({ 'etcd.service': 'active', 'kubelet.service': 'active' });
    const s = createSystemdUnits({
      units: defaultUnits('control-plane'),
      systemctl: createSystemctl(fake.path),
    });
    assert.deepEqual(await s.units(), ['etcd.service', 'kubelet.service']);
    await s.stopAll();
    await s.startAll();
    const acts = (await fake.calls()).filter((c) => /^(start|stop) /.test(c));
    assert.deepEqual(acts, [
      'stop kubelet.service',
      'stop etcd.service',
      'start etcd.service',
      'start kubelet.service',
    ]);
    assert.equal(
      (await fake.calls()).filter((c) => c.startsWith('show ')).length,
      defaultUnits('control-plane').length,
      'looked up once',
    );
  });

  it('stops a node runtime kubelet first, then its pods, then containerd, and starts it the other way', async () => {
    const fake = await standIn({
      'containerd.service': 'active',
      'molt-kube-pods.service': 'active',
      'kubelet.service': 'active',
    });
    const s = createSystemdUnits({
      units: defaultUnits('worker'),
      systemctl: createSystemctl(fake.path),
    });
    await s.stopAll();
    await s.startAll();
    const acts = (await fake.calls()).filter((c) => /^(start|stop) /.test(c));
    assert.deepEqual(acts, [
      'stop kubelet.service',
      'stop molt-kube-pods.service',
      'stop containerd.service',
      'start containerd.service',
      'start molt-kube-pods.service',
      'start kubelet.service',
    ]);
  });

  it('fails a start with MOLT_SERVICE_START_FAILED and systemd’s words', async () => {
    const fake = await standIn({ 'kubelet.service': 'inactive' });
    await fake.breakStart('kubelet.service', true);
    const s = createSystemdUnits({
      units: ['kubelet.service'],
      systemctl: createSystemctl(fake.path),
    });
    await rejectsWithCode(s.startAll(), ErrorCode.ServiceStartFailed, 'control process exited');
  });

  it('names the unit and the time when a stop runs out of time', async () => {
    const fake = await standIn({ 'kubelet.service': 'active' });
    await fake.jam('kubelet.service', true);
    const s = createSystemdUnits({
      units: ['kubelet.service'],
      systemctl: createSystemctl(fake.path),
      stopTimeoutMs: 200,
    });
    const started = performance.now();
    await rejectsWithCode(
      s.stopAll(),
      ErrorCode.ServiceStopFailed,
      'still deactivating after 0.2 s',
    );
    assert.ok(performance.now() - started < 5000, 'the hung stop was cut at its timeout');
  });

  it('runs etcd.service with molt’s flags as ETCD_* variables, and not while disabled', async () => {
    const fake = await standIn({ 'etcd.service': 'inactive' });
    const root = await tempDir('etcd-unit');
    try {
      const etcd = createSystemdEtcdService({
        root: root.path,
        name: 'cp-1',
        peerUrl: 'http://10.0.0.1:2380',
        clientUrl: 'http://10.0.0.1:2379',
        initialCluster: 'cp-1=http://10.0.0.1:2380',
        dataDir: '/molt/ephemeral/etcd',
        systemctl: createSystemctl(fake.path),
      });
      await etcd.disable();
      await etcd.startAll();
      assert.equal(await fake.unitState('etcd.service'), 'inactive');
      await etcd.enable();
      await etcd.startAll();
      assert.deepEqual(await etcd.running(), ['etcd.service']);
      const env = await readFile(join(root.path, 'state', 'etcd.env'), 'utf8');
      assert.match(env, /^ETCD_NAME=cp-1$/m);
      assert.match(env, /^ETCD_INITIAL_CLUSTER=cp-1=http:\/\/10\.0\.0\.1:2380$/m);
      assert.match(env, /^ETCD_INITIAL_CLUSTER_STATE=new$/m);
      assert.match(env, /^ETCD_DATA_DIR=\/molt\/ephemeral\/etcd$/m);
      await etcd.stopAll();
      assert.deepEqual(await etcd.running(), []);
    } finally {
      await root.remove();
    }
  });

  it('maps flags to variables and writes a drop-in that honours the disabled marker', () => {
    assert.equal(
      etcdEnvironment(['--listen-peer-urls=http://a:2380', '--name=x', 'positional']),
      'ETCD_LISTEN_PEER_URLS=http://a:2380\nETCD_NAME=x\n',
    );
    const dropIn = etcdUnitDropIn('/molt', '/molt/ephemeral/etcd');
    assert.match(dropIn, /^ConditionPathExists=!\/molt\/state\/etcd\.disabled$/m);
    assert.match(dropIn, /^EnvironmentFile=\/molt\/state\/etcd\.env$/m);
  });
});
