// SPDX-License-Identifier: Apache-2.0
// The agent's runner and executor driving the real-machine adapters where this machine can run
// them: EPHEMERAL is a real ext4 partition on a loop device (partition-mounts), the services are
// systemd units through a FAKE systemctl (no systemd here; src/testkit/systemctl-standin.ts), and
// health is systemd's through the same stand-in. Slots, bootloader, image and power are the
// ports' fakes. Proves (1) a busy EPHEMERAL aborts before the slot is touched and restarts what
// was stopped, and (2) a `preserve: false` upgrade wipes the partition after the reboot although
// the boot already started the units that hold it.
import assert from 'node:assert/strict';
import { writeFile, access } from 'node:fs/promises';
import { join } from 'node:path';
import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import { after, describe, it } from 'node:test';
import { createNoClusterKubeNode } from '../../src/agent/adapters/no-cluster/index.ts';
import { createPartitionMounts } from '../../src/agent/adapters/partition-mounts/index.ts';
import {
  systemdSystemHealth,
  systemdUnitsHealth,
} from '../../src/agent/adapters/systemd-health/index.ts';
import {
  createSystemctl,
  createSystemdUnits,
} from '../../src/agent/adapters/systemd-units/index.ts';
import { stopServicesBeforeWipe } from '../../src/agent/compose-real.ts';
import { createRunner, type Runner } from '../../src/agent/machine/runner.ts';
import { createFakeBootloader } from '../../src/agent/ports/bootloader.fake.ts';
import { createFakeClock } from '../../src/agent/ports/clock.fake.ts';
import { createFakeImageSource } from '../../src/agent/ports/image-source.fake.ts';
import { createMemoryJournalStore } from '../../src/agent/ports/journal-store.fake.ts';
import { createFakePower } from '../../src/agent/ports/power.fake.ts';
import { FakeSlotStore } from '../../src/agent/ports/slot-store.fake.ts';
import { loopPartition, loopUnavailable } from '../../src/testkit/loop-partition.ts';
import { createSystemctlStandIn } from '../../src/testkit/systemctl-standin.ts';

const run = promisify(execFile);
const exists = (p: string): Promise<boolean> =>
  access(p).then(
    () => true,
    () => false,
  );
const image = (version: string) => ({
  imageDigest: `sha256:${version.replace(/\D/g, '').padEnd(64, '0')}`,
  version,
  artifacts: {
    vmlinuz: new TextEncoder().encode(`kernel ${version}`),
    'rootfs.img': new TextEncoder().encode(`root ${version}`),
  },
});
const units = ['containerd.service', 'kubelet.service'];

async function machine() {
  const disk = await loopPartition();
  const systemctl = await createSystemctlStandIn({
    'containerd.service': 'active',
    'kubelet.service': 'active',
  });
  const clock = createFakeClock();
  const slots = new FakeSlotStore(() => new Date(clock.now()));
  const bootloader = createFakeBootloader();
  slots.stage('A', { ...image('1.0'), imageRef: 'reg/molt:1.0' });
  await slots.install('A', 'install');
  await slots.markReady('A', 'install');
  await bootloader.writeEntry('A', (await slots.manifest('A'))!);
  await bootloader.commit('A');
  const ctl = createSystemctl(systemctl.path);
  const services = createSystemdUnits({ units, systemctl: ctl });
  const m = {
    disk,
    systemctl,
    slots,
    bootloader,
    clock,
    journal: createMemoryJournalStore(),
    power: createFakePower(),
    boots: 0,
    runner: undefined as Runner | undefined,
    ports: {
      bootloader,
      slots,
      images: createFakeImageSource(slots, { 'reg/molt:1.1': image('1.1') }),
      services,
      mounts: stopServicesBeforeWipe(
        createPartitionMounts({ mountPoint: disk.mnt, device: disk.device }),
        services,
      ),
      kube: createNoClusterKubeNode(),
      clock,
      health: [systemdSystemHealth(ctl), systemdUnitsHealth(ctl, () => services.units())],
    },
  };
  return m;
}
type Machine = Awaited<ReturnType<typeof machine>>;

async function boot(m: Machine): Promise<Runner> {
  m.runner?.close();
  m.boots += 1;
  m.power = createFakePower();
  const runner = createRunner({
    journal: m.journal,
    ports: { ...m.ports, power: m.power },
    boot: { bootId: `boot-${String(m.boots)}`, slot: m.bootloader.firmwareBoot() ?? 'A' },
    faults: { at: () => Promise.resolve() },
    holds: { check: () => undefined },
    controlPlane: false,
    healthDeadlineMs: 30_000,
    newOperationId: () => `op-${String(m.boots)}`,
    onFatal: (error) => {
      throw error;
    },
    tickMs: 5,
  });
  m.runner = runner;
  await runner.start();
  return runner;
}

const actions = async (m: Machine): Promise<string[]> =>
  (await m.systemctl.calls()).filter((c) => /^(start|stop) /.test(c));

const why = await loopUnavailable();

describe('the runner on real EPHEMERAL and systemd units (FAKE systemctl)', { skip: why }, () => {
  const machines: Machine[] = [];
  after(async () => {
    for (const m of machines) {
      m.runner?.close();
      await m.disk.close();
      await m.systemctl.remove();
    }
  });

  it('aborts on a busy EPHEMERAL before touching the slot, and starts the units again', async () => {
    const m = await machine();
    machines.push(m);
    const letGo = await m.disk.hold();
    const runner = await boot(m);
    await runner.submit({ kind: 'upgrade', image: 'reg/molt:1.1' });
    await runner.settled();
    await letGo();
    assert.equal(runner.state().phase, 'Idle');
    assert.equal(runner.state().last?.code, 'MOLT_MOUNT_BUSY');
    assert.match(runner.state().last?.reason ?? '', /held by \d+ \(sleep\)/);
    assert.equal(await m.slots.manifest('B'), undefined, 'slot B untouched');
    assert.equal(m.bootloader.oneShot, null);
    assert.equal(m.power.reboots.length, 0);
    assert.equal(await m.disk.mounted(), true);
    assert.deepEqual((await actions(m)).slice(-4), [
      'stop kubelet.service',
      'stop containerd.service',
      'start containerd.service',
      'start kubelet.service',
    ]);
  });

  it('wipes EPHEMERAL after the reboot although the boot started its units', async () => {
    const m = await machine();
    machines.push(m);
    await writeFile(join(m.disk.mnt, 'old-data'), 'x');
    const first = await boot(m);
    await first.submit({ kind: 'upgrade', image: 'reg/molt:1.1', preserve: false });
    for (let i = 0; i < 2000 && m.power.reboots.length === 0; i += 1) {
      await new Promise((resolve) => setTimeout(resolve, 5));
      m.clock.advance(1000);
    }
    assert.equal(m.power.reboots.length, 1, 'the machine asked for its reboot');
    assert.equal(await m.disk.mounted(), false, 'released before the reboot');
    // The reboot: the image's fstab mounts EPHEMERAL and systemd starts the units, whose
    // processes hold it (the kubelet's working directory is on it).
    await run('mount', [m.disk.device, m.disk.mnt]);
    for (const u of units) await m.systemctl.setUnit(u, 'active');
    const kubelet = spawn('sleep', ['300'], { cwd: m.disk.mnt, stdio: 'ignore' });
    await m.systemctl.attach('kubelet.service', kubelet.pid ?? assert.fail('no pid'));
    const second = await boot(m);
    await second.settled();
    assert.equal(second.state().last?.result, 'Succeeded');
    assert.equal(m.bootloader.committed, 'B');
    assert.equal(await exists(join(m.disk.mnt, 'old-data')), false, 'wiped');
    assert.equal(await exists(join(m.disk.mnt, '.molt-wiped-op-1')), true);
    assert.deepEqual(await m.ports.services.running(), units);
    assert.deepEqual((await actions(m)).slice(-4), [
      'stop kubelet.service',
      'stop containerd.service',
      'start containerd.service',
      'start kubelet.service',
    ]);
  });
});
