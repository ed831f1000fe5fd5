// SPDX-License-Identifier: Apache-2.0
// Which adapters the composition root picks: a config with `disk:` is a real machine (systemd
// units, a mounted EPHEMERAL partition, systemd health), one without is a lab machine as before.
// Told apart by behaviour, with a FAKE systemctl (src/testkit/systemctl-standin.ts) since no
// machine here runs systemd; no module is mocked.
import assert from 'node:assert/strict';
import { access, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { ErrorCode } from '../core/errors.ts';
import { MachineConfig, type MachineConfigInput } from '../protocol/machine-config.ts';
import { tempDir } from '../platform/process/managed-process.ts';
import { rejectsWithCode } from '../testkit/registry-conformance.ts';
import { createSystemctlStandIn, type SystemctlStandIn } from '../testkit/systemctl-standin.ts';
import { machinePorts } from './compose.ts';
import { createFakePower } from './ports/power.fake.ts';

const exists = (p: string): Promise<boolean> =>
  access(p).then(
    () => true,
    () => false,
  );

describe('machinePorts chooses the adapters from the machine config', () => {
  const cleanup: (() => Promise<void>)[] = [];
  after(async () => {
    for (const c of cleanup) await c();
  });

  async function compose(input: MachineConfigInput, systemctl?: SystemctlStandIn) {
    const dir = await tempDir('compose');
    cleanup.push(dir.remove);
    await mkdir(join(dir.path, 'ephemeral'));
    const config = MachineConfig.parse(
      input.disk === undefined
        ? input
        : { ...input, disk: { ...input.disk, ephemeral: join(dir.path, 'ephemeral') } },
    );
    const ports = await machinePorts({
      root: dir.path,
      config,
      boot: { bootId: 'b1', slot: 'A' },
      power: createFakePower(),
      lab: false,
      ...(systemctl === undefined ? {} : { systemctl: systemctl.path }),
    });
    if (ports.lease !== undefined) cleanup.push(() => ports.lease?.close() ?? Promise.resolve());
    return { root: dir.path, ports };
  }
  const standIn = async (units: Record<string, 'active'>): Promise<SystemctlStandIn> => {
    const s = await createSystemctlStandIn(units);
    cleanup.push(() => s.remove());
    return s;
  };
  const worker = { node: 'w1', role: 'worker', bootloader: 'grub' } as const;

  it('a lab worker (no disk:): no services, EPHEMERAL a directory, no systemd health', async () => {
    const { root, ports } = await compose(worker);
    assert.deepEqual(
      ports.health.map((h) => h.name),
      ['kube-node-ready'],
    );
    assert.deepEqual(await ports.services.running(), []);
    await ports.mounts.release();
    assert.equal(await exists(join(root, 'run', 'ephemeral.released')), true, 'the lab marker');
  });

  it('a real worker: its systemd units, the partition mount, systemd health', async () => {
    const systemctl = await standIn({
      'containerd.service': 'active',
      'molt-kube-pods.service': 'active',
      'kubelet.service': 'active',
    });
    const { root, ports } = await compose({ ...worker, disk: {} }, systemctl);
    assert.deepEqual(
      ports.health.map((h) => h.name),
      ['kube-node-ready', 'systemd', 'systemd-units'],
    );
    assert.deepEqual(await ports.services.running(), [
      'containerd.service',
      'molt-kube-pods.service',
      'kubelet.service',
    ]);
    await ports.mounts.release(); // nothing mounted there: released already
    assert.equal(await exists(join(root, 'run', 'ephemeral.released')), false);
    assert.equal(ports.etcd, undefined);
    assert.equal(ports.lease, undefined);
    // After a reboot the boot has started the units, which hold EPHEMERAL: a wipe stops them
    // first. (Nothing is mounted here and there is no molt-ephemeral partition: it then refuses.)
    await rejectsWithCode(ports.mounts.wipe('op-1'), ErrorCode.MountFailed, 'molt-ephemeral');
    assert.deepEqual(await ports.services.running(), []);
  });

  it('a real control plane: etcd.service run by the member adapter, first up, last down', async () => {
    const systemctl = await standIn({ 'etcd.service': 'active', 'kubelet.service': 'active' });
    const { ports } = await compose(
      {
        node: 'cp1',
        role: 'control-plane',
        bootloader: 'systemd-boot',
        disk: { units: ['kubelet.service', 'etcd.service'] },
        etcd: {
          name: 'cp1',
          peerUrl: 'http://127.0.0.1:1',
          clientUrl: 'http://127.0.0.1:2',
          initialCluster: 'cp1=http://127.0.0.1:1',
          endpoints: ['http://127.0.0.1:2'],
        },
      },
      systemctl,
    );
    assert.ok(ports.etcd !== undefined && ports.lease !== undefined);
    assert.deepEqual(
      ports.health.map((h) => h.name),
      ['kube-node-ready', 'etcd-member', 'systemd', 'systemd-units'],
    );
    await ports.services.stopAll();
    await ports.services.startAll();
    assert.deepEqual(
      (await systemctl.calls()).filter((c) => /^(start|stop) /.test(c)),
      ['stop kubelet.service', 'stop etcd.service', 'start etcd.service', 'start kubelet.service'],
    );
  });

  it('a lab control plane with controlPlane: its components, a health check each', async () => {
    const component = (port: number) => ({ port, args: [`--secure-port=${String(port)}`] });
    const { ports } = await compose({
      node: 'cp1',
      role: 'control-plane',
      bootloader: 'grub',
      etcd: {
        name: 'cp1',
        peerUrl: 'http://127.0.0.1:1',
        clientUrl: 'http://127.0.0.1:2',
        initialCluster: 'cp1=http://127.0.0.1:1',
        endpoints: ['http://127.0.0.1:2'],
      },
      controlPlane: {
        binaries: '/opt/kube',
        version: 'v1.35.4',
        components: { 'kube-scheduler': component(3), 'kube-apiserver': component(4) },
      },
    });
    assert.deepEqual(
      ports.health.map((h) => h.name),
      ['kube-node-ready', 'kube-apiserver', 'kube-scheduler', 'etcd-member'],
    );
    const status = await ports.controlPlane?.status();
    assert.deepEqual(
      status?.components.map((c) => [c.name, c.version, c.running]),
      [
        ['kube-apiserver', 'v1.35.4', false],
        ['kube-scheduler', 'v1.35.4', false],
      ],
      'in start order, from the initial binaries',
    );
    assert.equal((await compose(worker)).ports.controlPlane, undefined);
  });
});
