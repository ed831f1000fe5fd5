// SPDX-License-Identifier: Apache-2.0
// End to end on one lab machine per bootloader: the real registry, `molt lab machine` playing the
// firmware (GRUB or systemd-boot files, as the real ones read them), `molt agent` over mTLS, and
// the `molt node` CLI. Upgrade, automatic rollback on an unhealthy slot and on a slot that fails
// to boot, a reboot, a manual rollback, and a manual rollback refused when the other slot is bad.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createRegistryClient } from '../../../src/oci/index.ts';
import { pushInstallerImage } from '../../../src/testkit/installer-image.ts';
import { tempDir } from '../../../src/testkit/process.ts';
import { startRegistry, type RunningRegistry } from '../../../src/testkit/registry-process.ts';
import { createFleetPki, startLabMachine, type FleetPki, type LabMachine } from './harness.ts';

let registry: RunningRegistry;
let pki: FleetPki;
let scratch: { path: string; remove: () => Promise<void> };
const repo = 'molt/installer';

before(async () => {
  registry = await startRegistry();
  scratch = await tempDir('lab-machine');
  pki = await createFleetPki(join(scratch.path, 'pki'));
  const client = createRegistryClient({ registry: registry.host, insecure: true });
  await pushInstallerImage(client, repo, '1.0.0', { version: '1.0.0' });
  await pushInstallerImage(client, repo, '1.1.0', { version: '1.1.0' });
  await pushInstallerImage(client, repo, '1.2.0', {
    version: '1.2.0',
    labels: { 'dev.molt.lab.health': 'never' },
  });
  await pushInstallerImage(client, repo, '1.3.0', {
    version: '1.3.0',
    labels: { 'dev.molt.lab.boot': 'fail' },
  });
  await client.close();
});

after(async () => {
  await registry.stop();
  await scratch.remove();
});

for (const bootloader of ['grub', 'systemd-boot'] as const) {
  describe(`a lab machine booting with ${bootloader}`, () => {
    let machine: LabMachine;
    const image = (tag: string): string => `${registry.host}/${repo}:${tag}`;

    before(() => {
      machine = startLabMachine({
        root: join(scratch.path, bootloader),
        bootloader,
        pki,
        image: image('1.0.0'),
      });
    });
    after(async () => {
      await machine.stop();
    });

    it('comes up on the installed release in slot A', async () => {
      const status = await machine.status();
      assert.equal(status.bootedSlot, 'A');
      assert.equal(status.version, '1.0.0');
      assert.equal(status.boot.committed, 'A');
    });

    it('upgrades to 1.1.0 through a boot-once of slot B, then commits it', async () => {
      const { bootId } = await machine.agent();
      const r = await machine.molt([
        'node',
        'upgrade',
        '--image',
        image('1.1.0'),
        '--follow',
        '-o',
        'json',
      ]);
      assert.equal(r.code, 0, r.stderr);
      await machine.agent(bootId);
      const status = await machine.status();
      assert.equal(status.bootedSlot, 'B');
      assert.equal(status.version, '1.1.0');
      assert.equal(status.boot.committed, 'B');
      assert.equal(status.last?.result, 'Succeeded');
      assert.deepEqual(
        status.slots.map((s) => [s.slot, s.status, s.version]),
        [
          ['A', 'ready', '1.0.0'],
          ['B', 'ready', '1.1.0'],
        ],
      );
    });

    it('reboots on request into the same committed slot, keeping EPHEMERAL', async () => {
      await mkdir(join(machine.root, 'ephemeral', 'data'), { recursive: true });
      await writeFile(join(machine.root, 'ephemeral', 'data', 'kept'), 'workload data');
      const { bootId } = await machine.agent();
      const r = await machine.molt(['node', 'reboot', '--follow', '-o', 'json']);
      assert.equal(r.code, 0, r.stderr);
      const status = await machine.status();
      assert.notEqual(status.bootId, bootId);
      assert.equal(status.bootedSlot, 'B');
      assert.equal(status.last?.kind, 'reboot');
      assert.equal(
        await readFile(join(machine.root, 'ephemeral', 'data', 'kept'), 'utf8'),
        'workload data',
      );
    });

    it('rolls back by hand to the previous slot, which boots once and is committed after health', async () => {
      const r = await machine.molt(['node', 'rollback', '--follow', '-o', 'json']);
      assert.equal(r.code, 0, r.stderr);
      const status = await machine.status();
      assert.equal(status.bootedSlot, 'A');
      assert.equal(status.version, '1.0.0');
      assert.equal(status.boot.committed, 'A');
      assert.equal(status.last?.result, 'RolledBack');
      assert.equal(status.last.reason, 'manual');
    });

    it('rolls back by itself from a release that never becomes healthy, and says why', async () => {
      const r = await machine.molt([
        'node',
        'upgrade',
        '--image',
        image('1.2.0'),
        '--follow',
        '-o',
        'json',
      ]);
      assert.equal(r.code, 1, `a rolled-back upgrade is a failure for the caller: ${r.stderr}`);
      const status = await machine.status();
      assert.equal(status.bootedSlot, 'A');
      assert.equal(status.version, '1.0.0');
      assert.equal(status.boot.committed, 'A');
      assert.equal(status.last?.result, 'RolledBack');
      assert.match(status.last.reason ?? '', /HealthDeadline/);
      assert.equal(status.slots.find((s) => s.slot === 'B')?.status, 'bad');
    });

    it('falls back when the new slot fails to boot, and records a boot failure', async () => {
      const r = await machine.molt([
        'node',
        'upgrade',
        '--image',
        image('1.3.0'),
        '--follow',
        '-o',
        'json',
      ]);
      assert.equal(r.code, 1);
      const status = await machine.status();
      assert.equal(status.version, '1.0.0');
      assert.equal(status.last?.result, 'RolledBack');
      assert.match(status.last.reason ?? '', /BootFailed/);
    });

    it('refuses a manual rollback while the other slot holds no valid image', async () => {
      const r = await machine.molt(['node', 'rollback']);
      assert.equal(r.code, 1);
      assert.match(r.stderr, /MOLT_NO_VALID_SLOT/);
      assert.equal((await machine.status()).bootedSlot, 'A');
    });

    it('wipes EPHEMERAL on an upgrade that does not preserve it', async () => {
      await writeFile(join(machine.root, 'ephemeral', 'data', 'kept'), 'workload data');
      const r = await machine.molt([
        'node',
        'upgrade',
        '--image',
        image('1.1.0'),
        '--no-preserve',
        '--follow',
        '-o',
        'json',
      ]);
      assert.equal(r.code, 0, r.stderr);
      assert.equal((await machine.status()).version, '1.1.0');
      await assert.rejects(readFile(join(machine.root, 'ephemeral', 'data', 'kept')), {
        code: 'ENOENT',
      });
    });
  });
}
