// SPDX-License-Identifier: Apache-2.0
// Crash tests on a lab machine: the agent is killed (SIGKILL) before and after the commands of
// every phase of an upgrade, and the lab's power is cut (agent and services killed at once, the
// firmware boots again) at the phases where a half-done step would hurt. The lab cannot drop the
// page cache the way a real power cut does; every molt write is fsynced, which is what that needs.
// Whatever happens, the machine must end Idle, booted on its committed slot with nothing armed,
// fully upgraded or fully on its previous release — never half. One file per bootloader
// (crash-kills, crash-power): the two matrices run side by side.
import assert from 'node:assert/strict';
import { access, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createRegistryClient } from '../../../src/oci/index.ts';
import { pushInstallerImage } from '../../../src/testkit/installer-image.ts';
import { tempDir } from '../../../src/platform/process/managed-process.ts';
import { startRegistry, type RunningRegistry } from '../../../src/testkit/registry-process.ts';
import { createFleetPki, startLabMachine, type LabMachine } from './harness.ts';
import { assertWhole } from './whole.ts';

const repo = 'molt/installer';
/** Every phase a worker upgrade passes through (ReleasingLease is control-plane only). */
const phases = [
  'Pulling',
  'Cordoning',
  'Draining',
  'StoppingServices',
  'ReleasingMounts',
  'WritingSlot',
  'VerifyingSlot',
  'ArmingBootOnce',
  'Rebooting',
  'Rejoining',
  'HealthChecking',
  'Committing',
  'Uncordoning',
];
export const kills = phases.flatMap((p) =>
  p === 'Rebooting' ? [`${p}:before`] : [`${p}:before`, `${p}:after`],
);
export const powerCuts = [
  'WritingSlot:before',
  'WritingSlot:after',
  'ArmingBootOnce:after',
  'Rebooting:before',
  'HealthChecking:before',
  'Committing:after',
].map((f) => `${f}:power`);

/**
 * The crash matrix on one lab machine booting with `bootloader`: each fault in `faults` during one
 * upgrade, alternating between 1.0.0 and 2.0.0, on its own registry.
 */
export function crashMatrix(bootloader: 'grub' | 'systemd-boot', faults: readonly string[]): void {
  let registry: RunningRegistry;
  let scratch: { path: string; remove: () => Promise<void> };

  before(async () => {
    registry = await startRegistry();
    scratch = await tempDir('lab-crash');
    const client = createRegistryClient({ registry: registry.host, insecure: true });
    await pushInstallerImage(client, repo, '1.0.0', { version: '1.0.0' });
    await pushInstallerImage(client, repo, '2.0.0', { version: '2.0.0' });
    await client.close();
  });
  after(async () => {
    await registry.stop();
    await scratch.remove();
  });

  describe(`crashes during upgrades (${bootloader})`, () => {
    let machine: LabMachine;
    let version = '1.0.0';
    before(async () => {
      const pki = await createFleetPki(join(scratch.path, `pki-${bootloader}`));
      // A generous deadline: a kill during the trial costs a restart, which must not look unhealthy.
      machine = startLabMachine({
        root: join(scratch.path, bootloader),
        bootloader,
        pki,
        image: `${registry.host}/${repo}:1.0.0`,
        healthDeadlineSeconds: 20,
      });
      await machine.status();
    });
    after(async () => {
      await machine.stop();
    });

    for (const fault of faults) {
      it(`${fault}: ends fully upgraded or fully rolled back`, async () => {
        const before = await machine.status();
        const target = version === '1.0.0' ? '2.0.0' : '1.0.0';
        await writeFile(join(machine.root, 'state', 'lab-fault'), fault);
        const r = await machine.molt([
          'node',
          'upgrade',
          '--image',
          `${registry.host}/${repo}:${target}`,
          '--follow',
          '-o',
          'json',
        ]);
        const lines = r.stdout
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l) as { operationId: string });
        const operationId = lines[0]?.operationId ?? '';
        const status = await machine.status();
        await access(join(machine.root, 'state', `fault-fired-${fault.replaceAll(':', '-')}`)); // the crash really happened
        assertWhole(status, operationId);
        if (fault.endsWith(':power') && status.last?.result !== 'Succeeded') {
          // A power cut before the new slot was committed may end the upgrade; the machine is on its old release.
          assert.equal(status.version, before.version, r.stderr);
          assert.equal(status.bootedSlot, before.bootedSlot);
        } else {
          // Killing the agent is never a reason to give up: the journal resumes the upgrade.
          assert.equal(status.last?.result, 'Succeeded', `${r.stdout}${r.stderr}`);
          assert.equal(status.version, target);
          assert.notEqual(status.bootedSlot, before.bootedSlot);
          version = target;
        }
      });
    }
  });
}
