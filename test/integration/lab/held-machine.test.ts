// SPDX-License-Identifier: Apache-2.0
// Issue 16, guards at the machine, end to end on one lab machine: a held machine's agent refuses a
// direct `molt node upgrade` with MOLT_MACHINE_HELD before touching anything, keeps the hold across
// a reboot (a new agent process reading state/hold.json), lets an admin force an upgrade through it
// and a rollback happen under it; and a hold made through a real `molt operator` reaches the agent.
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { stringify } from 'yaml';
import { runMolt } from '../../../src/lab/fleet/machine.ts';
import { createRegistryClient } from '../../../src/oci/index.ts';
import { issueToDir } from '../../../src/platform/pki/store.ts';
import {
  eventually,
  startProcess,
  tempDir,
  type ManagedProcess,
} from '../../../src/platform/process/managed-process.ts';
import type { AgentStatus } from '../../../src/protocol/agent.ts';
import { pushInstallerImage } from '../../../src/testkit/installer-image.ts';
import { startRegistry, type RunningRegistry } from '../../../src/testkit/registry-process.ts';
import {
  createFleetPki,
  moltArgv,
  snapshotTree,
  startLabMachine,
  type FleetPki,
  type LabMachine,
} from './harness.ts';

let registry: RunningRegistry;
let pki: FleetPki;
let scratch: { path: string; remove: () => Promise<void> };
let machine: LabMachine;
const repo = 'molt/installer';
const node = 'held-1';
const image = (tag: string): string => `${registry.host}/${repo}:${tag}`;
/** The lab machine, started (again) on its root: the same state, config and agent port. */
const startMachine = (): LabMachine =>
  startLabMachine({
    root: join(scratch.path, node),
    bootloader: 'grub',
    pki,
    image: image('1.0.0'),
  });
/** Environment that makes `molt` act with the certificate `name` from the fleet PKI. */
const as = (name: string): Record<string, string> => ({
  MOLT_CERT: join(pki.dir, `${name}.pem`),
  MOLT_KEY: join(pki.dir, `${name}.key`),
  MOLT_CA: join(pki.dir, 'ca.pem'),
});

before(async () => {
  registry = await startRegistry();
  scratch = await tempDir('lab-held');
  pki = await createFleetPki(join(scratch.path, 'pki'));
  const issue = (role: 'admin' | 'operator' | 'node', name: string, sans: string[] = []) =>
    issueToDir({ caDir: pki.dir, outDir: pki.dir, role, name, sans, days: 1 });
  await issue('admin', 'root');
  await issue('operator', 'alice');
  await issue('node', 'operator-api', ['127.0.0.1']);
  await issue('node', 'viewer');
  const client = createRegistryClient({ registry: registry.host, insecure: true });
  await pushInstallerImage(client, repo, '1.0.0', { version: '1.0.0' });
  await pushInstallerImage(client, repo, '1.1.0', { version: '1.1.0' });
  await client.close();
  machine = startMachine();
  await machine.agent();
});

after(async () => {
  await machine.stop();
  await registry.stop();
  await scratch.remove();
});

/** `molt node upgrade` to 1.1.0 as the operator certificate: refused, with the error printed. */
async function refusedUpgrade(): Promise<{ stderr: string; before: AgentStatus }> {
  const before = await machine.status();
  const disk = await snapshotTree(machine.root, ['esp', 'slots']);
  const r = await machine.molt(['node', 'upgrade', '--image', image('1.1.0'), '--follow']);
  assert.equal(r.code, 1, r.stdout);
  const status = await machine.status();
  assert.equal(status.bootId, before.bootId, 'the machine did not reboot');
  assert.equal(status.operation, null, 'no operation was accepted');
  assert.deepEqual(status.last, before.last, 'no operation was recorded');
  assert.deepEqual(status.slots, before.slots);
  assert.deepEqual(await snapshotTree(machine.root, ['esp', 'slots']), disk, 'nothing written');
  return { stderr: r.stderr, before };
}

describe('a held lab machine', () => {
  it('refuses a direct upgrade with MOLT_MACHINE_HELD, naming the reason and the end, touching nothing', async () => {
    const held = await machine.molt(['node', 'hold', '--reason', 'disk swap', '--for', '2h']);
    assert.equal(held.code, 0, held.stderr);
    assert.match(held.stdout, /^hold: until \S+Z \(in [\dhms]+\) by operator: disk swap$/m);
    const { stderr } = await refusedUpgrade();
    assert.match(
      stderr,
      /^error MOLT_MACHINE_HELD: held-1 is held until \S+Z by operator: disk swap$/m,
    );
    assert.match(stderr, /molt node release.*admin can force the upgrade/);
    const status = await machine.molt(['node', 'status']);
    assert.match(status.stdout, /^hold: +until \S+Z \(in [\dhms]+\) by operator: disk swap$/m);
  });

  it('refuses a node certificate’s release', async () => {
    const { url } = await machine.agent();
    const r = await runMolt(moltArgv, ['node', 'release'], { ...as('viewer'), MOLT_ENDPOINT: url });
    assert.equal(r.code, 1);
    assert.match(r.stderr, /MOLT_FORBIDDEN: viewer \(role node\) may not call \/v1\/hold/);
    assert.equal((await machine.status()).hold?.reason, 'disk swap');
  });

  it('keeps the hold across a reboot (a reboot is allowed while held): the new agent refuses too', async () => {
    const before = await machine.status();
    const r = await machine.molt(['node', 'reboot', '--follow']);
    assert.equal(r.code, 0, r.stderr);
    await machine.agent(before.bootId);
    const after = await machine.status();
    assert.notEqual(after.bootId, before.bootId, 'a new boot, a new agent process');
    assert.deepEqual(after.hold, before.hold);
    await refusedUpgrade();
  });

  it('lets an admin force the upgrade through the hold', async () => {
    const { url, bootId } = await machine.agent();
    const r = await runMolt(
      moltArgv,
      ['node', 'upgrade', '--image', image('1.1.0'), '--force', '--follow'],
      { ...as('root'), MOLT_ENDPOINT: url },
    );
    assert.equal(r.code, 0, r.stderr);
    await machine.agent(bootId);
    const status = await machine.status();
    assert.equal(status.version, '1.1.0');
    assert.equal(status.hold?.reason, 'disk swap', 'still held');
  });

  it('rolls back while held: a hold never stands in the way of recovery', async () => {
    const r = await machine.molt(['node', 'rollback', '--follow']);
    assert.equal(r.code, 0, r.stderr);
    const status = await machine.status();
    assert.equal(status.version, '1.0.0');
    assert.equal(status.last?.result, 'RolledBack');
    const released = await machine.molt(['node', 'release']);
    assert.equal(released.code, 0, released.stderr);
    assert.equal((await machine.status()).hold, null);
  });

  describe('held through the operator', () => {
    let operator: ManagedProcess;
    let operatorUrl: string;
    const machineCli = (args: readonly string[]) =>
      runMolt(moltArgv, ['machine', ...args], { ...as('alice'), MOLT_OPERATOR: operatorUrl });

    before(async () => {
      const { url } = await machine.agent();
      const file = (name: string): string => join(scratch.path, name);
      await writeFile(
        file('fleet.yaml'),
        stringify({
          // Approval keeps the operator from rolling 1.1.0 out once the machine is released.
          pools: [{ name: 'workers', requireApproval: true, policies: [] }],
          machines: [{ id: node, pool: 'workers', endpoint: url }],
        }),
      );
      await writeFile(
        file('operator.yaml'),
        stringify({
          registry: registry.host,
          repository: repo,
          insecure: true,
          fleet: 'fleet.yaml',
          pki: {
            ca: 'pki/ca.pem',
            cert: 'pki/operator.pem',
            key: 'pki/operator.key',
            serverCert: 'pki/operator-api.pem',
            serverKey: 'pki/operator-api.key',
          },
          store: 'memory',
          interval: '1s',
          listen: { host: '127.0.0.1', port: 0 },
        }),
      );
      const [command = process.execPath, ...prefix] = moltArgv;
      operator = startProcess('molt operator', command, [
        ...prefix,
        'operator',
        '--config',
        file('operator.yaml'),
      ]);
      const m = await operator.waitFor(/^molt operator: serving (https:\/\/127\.0\.0\.1:\d+)$/m);
      operatorUrl = m[1] ?? '';
    });
    after(async () => {
      await operator.stop();
    });

    it('sets the hold on the agent, for the person who held it, and the agent refuses a direct upgrade', async () => {
      const r = await machineCli(['hold', node, '--reason', 'maintenance', '--for', '1h']);
      assert.equal(r.code, 0, r.stderr);
      const status = await eventually(
        async () => {
          const s = await machine.status();
          assert.equal(s.hold?.reason, 'maintenance');
          return s;
        },
        { timeoutMs: 15_000, intervalMs: 200 },
      );
      assert.equal(status.hold?.onBehalfOf, 'alice');
      assert.deepEqual(status.hold.setBy, { name: 'operator', role: 'operator' });
      const { stderr } = await refusedUpgrade();
      assert.match(
        stderr,
        /^error MOLT_MACHINE_HELD: held-1 is held until \S+Z by alice: maintenance$/m,
      );
      assert.match(stderr, /molt machine release held-1/);
    });

    it('pushes a hold made while the agent was down once the machine is back', async () => {
      const { bootId } = await machine.agent();
      await machine.stop();
      const r = await machineCli(['hold', node, '--reason', 'rack move', '--for', '1h']);
      assert.equal(r.code, 0, `the operator's hold stands without the agent: ${r.stderr}`);
      machine = startMachine();
      await machine.agent(bootId);
      await eventually(
        async () => {
          const { hold } = await machine.status();
          assert.equal(hold?.reason, 'rack move');
          assert.equal(hold.onBehalfOf, 'alice');
        },
        { timeoutMs: 30_000, intervalMs: 250 },
      );
    });

    it('clears it on the agent when released through the operator', async () => {
      const r = await machineCli(['release', node]);
      assert.equal(r.code, 0, r.stderr);
      await eventually(
        async () => {
          assert.equal((await machine.status()).hold, null);
        },
        { timeoutMs: 15_000, intervalMs: 200 },
      );
    });
  });
});
