// SPDX-License-Identifier: Apache-2.0
// Issue 14 defect 3 end to end, on one lab machine per bootloader: an installer image whose
// `cmdline` molt will not pass to a bootloader is refused while it is staged — before the node is
// cordoned and before the inactive slot is touched — so the previous release stays in that slot,
// `ready`, with its boot entry, and a manual rollback to it still works. Likewise an
// upgrade to the image the machine already runs.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { join } from 'node:path';
import { createRegistryClient } from '../../../src/oci/index.ts';
import { pushInstallerImage } from '../../../src/testkit/installer-image.ts';
import { eventually, tempDir } from '../../../src/platform/process/managed-process.ts';
import { startRegistry, type RunningRegistry } from '../../../src/testkit/registry-process.ts';
import {
  createFleetPki,
  parseEvents,
  snapshotTree,
  startLabMachine,
  type FleetPki,
  type LabMachine,
} from './harness.ts';

let registry: RunningRegistry;
let pki: FleetPki;
let scratch: { path: string; remove: () => Promise<void> };
const repo = 'molt/installer';

before(async () => {
  registry = await startRegistry();
  scratch = await tempDir('lab-refused');
  pki = await createFleetPki(join(scratch.path, 'pki'));
  const client = createRegistryClient({ registry: registry.host, insecure: true });
  await pushInstallerImage(client, repo, '1.0.0', { version: '1.0.0' });
  await pushInstallerImage(client, repo, '1.1.0', { version: '1.1.0' });
  await pushInstallerImage(client, repo, '2.0.0-bad', {
    version: '2.0.0',
    artifacts: {
      vmlinuz: 4096,
      'initrd.img': 2048,
      'rootfs.img': 65_536,
      cmdline: new TextEncoder().encode('init=/bin/sh; reboot\n'),
    },
  });
  await client.close();
});

after(async () => {
  await registry.stop();
  await scratch.remove();
});

for (const bootloader of ['grub', 'systemd-boot'] as const) {
  describe(`a lab machine refusing a bad image (${bootloader})`, () => {
    let machine: LabMachine;
    const image = (tag: string): string => `${registry.host}/${repo}:${tag}`;

    before(async () => {
      machine = startLabMachine({
        root: join(scratch.path, bootloader),
        bootloader,
        pki,
        image: image('1.0.0'),
      });
      const { bootId } = await machine.agent();
      const r = await machine.molt(['node', 'upgrade', '--image', image('1.1.0'), '--follow']);
      assert.equal(r.code, 0, r.stderr);
      await machine.agent(bootId);
    });
    after(async () => {
      await machine.stop();
    });

    /** Ask for an upgrade to `tag` that the agent refuses; its events, then a check nothing changed. */
    async function refusedUpgrade(tag: string) {
      const before = await machine.status();
      const disk = await snapshotTree(machine.root, ['esp', 'slots']);
      const r = await machine.molt([
        'node',
        'upgrade',
        '--image',
        image(tag),
        '--follow',
        '-o',
        'json',
      ]);
      assert.equal(r.code, 1, r.stderr);
      const events = parseEvents(r.stdout);
      const phases = events.filter((e) => e.kind === 'phase').map((e) => e.phase);
      for (const never of ['Cordoning', 'Draining', 'WritingSlot', 'ArmingBootOnce'])
        assert.ok(!phases.includes(never), `${never} ran: ${phases.join(' ')}`);
      const untouched = async (): Promise<void> => {
        const status = await machine.status();
        assert.equal(status.bootId, before.bootId, 'the machine did not reboot');
        assert.deepEqual(status.slots, before.slots, 'slot A still holds 1.0.0, ready');
        assert.deepEqual(status.boot, before.boot, "slot A's boot entry is still there");
        await eventually(
          async () => {
            assert.deepEqual(await snapshotTree(machine.root, ['esp', 'slots']), disk);
          },
          { timeoutMs: 10_000, intervalMs: 100 },
        );
      };
      return { before, result: events.at(-1), untouched };
    }

    it('refuses it while staged: not cordoned, slot A still 1.0.0, ready, with its entry', async () => {
      const { before, result, untouched } = await refusedUpgrade('2.0.0-bad');
      assert.equal(before.bootedSlot, 'B');
      assert.equal(result?.result?.result, 'Failed');
      assert.equal(result.error?.code, 'MOLT_IMAGE_INVALID');
      assert.match(result.result.reason ?? '', /cmdline/);
      await untouched();
    });

    it('refuses an upgrade to the image it already runs (MOLT_ALREADY_RUNNING), keeping the fallback', async () => {
      const { result, untouched } = await refusedUpgrade('1.1.0');
      assert.equal(result?.error?.code, 'MOLT_ALREADY_RUNNING');
      await untouched();
    });

    it('still rolls back to the previous release', async () => {
      const r = await machine.molt(['node', 'rollback', '--follow', '-o', 'json']);
      assert.equal(r.code, 0, r.stderr);
      const status = await machine.status();
      assert.equal(status.bootedSlot, 'A');
      assert.equal(status.version, '1.0.0');
      assert.equal(status.last?.result, 'RolledBack');
    });
  });
}
