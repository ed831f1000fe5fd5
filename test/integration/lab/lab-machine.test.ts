// SPDX-License-Identifier: Apache-2.0
// End to end on one lab machine per bootloader: the real registry, `molt lab machine` playing the
// firmware (GRUB or systemd-boot files, as the real ones read them), `molt agent` over mTLS, and
// the `molt node` CLI. Upgrade, automatic rollback on an unhealthy slot and on a slot that fails
// to boot, a reboot (also with a silent TCP peer on the agent port), a manual rollback, and a manual rollback refused when the other slot is bad;
// an upgrade aborted by a busy EPHEMERAL mount, EPHEMERAL kept by a preserving upgrade, a staged
// upgrade completed by a reboot, and the journal as `molt node logs` prints it.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { access, mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createRegistryClient } from '../../../src/oci/index.ts';
import { pushInstallerImage } from '../../../src/testkit/installer-image.ts';
import { eventually, tempDir } from '../../../src/platform/process/managed-process.ts';
import { startRegistry, type RunningRegistry } from '../../../src/testkit/registry-process.ts';
import { silentSocket } from '../../../src/testkit/slow-peers.ts';
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
  for (const version of ['1.4.0', '1.5.0', '1.6.0'])
    await pushInstallerImage(client, repo, version, { version });
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

    it('reboots at once with a TCP connection open to the agent that never said hello', async () => {
      const { url, bootId } = await machine.agent();
      const silent = await silentSocket(url);
      const started = Date.now();
      const r = await machine.molt(['node', 'reboot', '--follow', '-o', 'json']);
      assert.equal(r.code, 0, r.stderr);
      assert.notEqual((await machine.status()).bootId, bootId);
      // Before the listener limits the reboot waited for this socket's TLS handshake:
      // Node's 120 s default. A reboot takes a few seconds here.
      const tookMs = Date.now() - started;
      assert.ok(tookMs < 60_000, `the reboot took ${String(tookMs)} ms`);
      silent.destroy();
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

    it('aborts an upgrade while EPHEMERAL is busy: no reboot, both slots and the boot untouched, MOLT_MOUNT_BUSY recorded', async () => {
      await writeFile(join(machine.root, 'ephemeral', '.busy'), 'a process holds the mount');
      const before = await machine.status();
      assert.equal(before.bootedSlot, 'B');
      const disk = await snapshotTree(machine.root, ['esp', 'slots']);
      const r = await machine.molt([
        'node',
        'upgrade',
        '--image',
        image('1.4.0'),
        '--follow',
        '-o',
        'json',
      ]);
      assert.equal(r.code, 1, `an aborted upgrade is a failure for the caller: ${r.stderr}`);
      const events = parseEvents(r.stdout);
      const phases = events.filter((e) => e.kind === 'phase').map((e) => e.phase);
      assert.ok(phases.includes('ReleasingMounts'), phases.join(' '));
      assert.ok(phases.includes('Aborting'), phases.join(' '));
      for (const never of ['WritingSlot', 'ArmingBootOnce', 'Rebooting'])
        assert.ok(!phases.includes(never), `${never} ran: ${phases.join(' ')}`);
      assert.ok(
        events.some((e) => e.phase === 'ReleasingMounts' && e.error?.code === 'MOLT_MOUNT_BUSY'),
        'the failed step is journalled with its code',
      );
      const result = events.at(-1);
      assert.equal(result?.kind, 'result');
      assert.equal(result.result?.result, 'Failed');
      assert.equal(result.error?.code, 'MOLT_MOUNT_BUSY');
      assert.match(result.result.reason ?? '', /ephemeral is busy \(held by .*\.busy\)/);

      const status = await machine.status();
      assert.equal(status.bootId, before.bootId, 'the machine did not reboot');
      assert.equal(status.bootedSlot, 'B');
      assert.equal(status.version, before.version);
      assert.deepEqual(status.boot, before.boot, 'nothing armed, nothing committed');
      assert.deepEqual(status.slots, before.slots);
      assert.equal(status.phase, 'Idle');
      assert.equal(status.operation, null);
      assert.equal(status.last?.operationId, result.operationId);
      assert.equal(status.last.kind, 'upgrade');
      assert.equal(status.last.result, 'Failed');
      assert.equal(status.last.code, 'MOLT_MOUNT_BUSY');
      assert.match(status.last.reason ?? '', /busy/);
      // The pull is discarded after the result (best-effort clean-up): nothing is left on disk.
      await eventually(
        async () => {
          assert.deepEqual(await snapshotTree(machine.root, ['esp', 'slots']), disk);
        },
        { timeoutMs: 10_000, intervalMs: 100 },
      );
      const ops = await machine.molt(['node', 'operations', '-o', 'json']);
      assert.deepEqual(
        (JSON.parse(ops.stdout) as { operationId: string; result?: unknown }[]).find(
          (o) => o.operationId === result.operationId,
        )?.result,
        result.result,
      );
    });

    it('upgrades once what held EPHEMERAL let go of it', async () => {
      await rm(join(machine.root, 'ephemeral', '.busy'), { force: true });
      const { bootId } = await machine.agent();
      const r = await machine.molt([
        'node',
        'upgrade',
        '--image',
        image('1.4.0'),
        '--follow',
        '-o',
        'json',
      ]);
      assert.equal(r.code, 0, r.stderr);
      const status = await machine.status();
      assert.notEqual(status.bootId, bootId);
      assert.equal(status.bootedSlot, 'A');
      assert.equal(status.version, '1.4.0');
      assert.equal(status.boot.committed, 'A');
      assert.equal(status.last?.result, 'Succeeded');
    });

    it('keeps EPHEMERAL on an upgrade that preserves it (the default)', async () => {
      await mkdir(join(machine.root, 'ephemeral', 'data'), { recursive: true });
      await writeFile(join(machine.root, 'ephemeral', 'data', 'kept'), 'workload data, again');
      const listing = async (): Promise<string[]> =>
        (await readdir(join(machine.root, 'ephemeral'), { recursive: true })).sort();
      const before = await listing();
      const r = await machine.molt([
        'node',
        'upgrade',
        '--image',
        image('1.5.0'),
        '--follow',
        '-o',
        'json',
      ]);
      assert.equal(r.code, 0, r.stderr);
      const status = await machine.status();
      assert.equal(status.bootedSlot, 'B');
      assert.equal(status.version, '1.5.0');
      assert.equal(
        await readFile(join(machine.root, 'ephemeral', 'data', 'kept'), 'utf8'),
        'workload data, again',
      );
      assert.deepEqual(await listing(), before, 'nothing removed or added in EPHEMERAL');
    });

    it('stages an upgrade without rebooting or arming it, keeps it across a power cut, then a reboot request applies and commits it', async () => {
      const before = await machine.status();
      const staged = await machine.molt([
        'node',
        'upgrade',
        '--image',
        image('1.6.0'),
        '--stage',
        '--follow',
        '-o',
        'json',
      ]);
      // --follow of a staged upgrade ends at Staged (it would otherwise wait for the reboot).
      assert.equal(staged.code, 0, staged.stderr);
      const followed = staged.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { operationId: string; kind: string; phase: string });
      assert.deepEqual(
        [followed.at(-1)?.kind, followed.at(-1)?.phase],
        ['phase', 'Staged'],
        staged.stdout,
      );
      const operationId = followed[0]?.operationId ?? '';
      const status = await eventually(
        async () => {
          const s = await machine.status();
          assert.equal(s.phase, 'Staged');
          return s;
        },
        { timeoutMs: 30_000, intervalMs: 100 },
      );
      assert.equal(status.bootId, before.bootId, 'staging does not reboot');
      assert.equal(status.bootedSlot, 'B');
      assert.equal(status.version, '1.5.0');
      assert.equal(status.boot.committed, 'B');
      assert.equal(status.boot.oneShot, null, 'nothing is armed: a reboot keeps 1.5.0');
      assert.deepEqual(status.operation && [status.operation.id, status.operation.kind], [
        operationId,
        'upgrade',
      ]);
      const slots = [
        ['A', 'staged', '1.6.0'],
        ['B', 'ready', '1.5.0'],
      ];
      assert.deepEqual(
        status.slots.map((s) => [s.slot, s.status, s.version]),
        slots,
      );
      // No disruption yet: EPHEMERAL is still mounted.
      await assert.rejects(access(join(machine.root, 'run', 'ephemeral.released')), {
        code: 'ENOENT',
      });
      const table = await machine.molt(['node', 'status']);
      assert.match(table.stdout, /^version: +1\.5\.0 on slot B$/m);
      assert.match(table.stdout, /^phase: +Staged$/m);
      assert.match(table.stdout, /^A +staged +1\.6\.0 /m);
      const other = await machine.molt(['node', 'upgrade', '--image', image('1.4.0')]);
      assert.equal(other.code, 1);
      assert.match(
        other.stderr,
        /MOLT_AGENT_BUSY: .*staged: a reboot applies it, a cancel discards it/,
      );

      // A power cut nobody planned: the committed slot boots, the staged upgrade still waits.
      process.kill(machine.process.pid, 'SIGUSR1');
      const cut = await eventually(
        async () => {
          const s = await machine.status();
          assert.notEqual(s.bootId, before.bootId);
          assert.equal(s.phase, 'Staged');
          return s;
        },
        { timeoutMs: 60_000, intervalMs: 200 },
      );
      assert.deepEqual(
        [cut.bootedSlot, cut.version, cut.boot.oneShot, cut.operation?.id],
        ['B', '1.5.0', null, operationId],
      );
      assert.deepEqual(
        cut.slots.map((s) => [s.slot, s.status, s.version]),
        slots,
      );

      const r = await machine.molt(['node', 'reboot', '--follow', '-o', 'json']);
      assert.equal(r.code, 0, r.stderr);
      const events = parseEvents(r.stdout);
      assert.ok(
        events.every((e) => e.operationId === operationId),
        'the reboot continues the staged operation',
      );
      assert.equal(events.at(-1)?.result?.result, 'Succeeded');
      const after = await machine.status();
      assert.notEqual(after.bootId, cut.bootId);
      assert.equal(after.bootedSlot, 'A');
      assert.equal(after.version, '1.6.0');
      assert.equal(after.boot.committed, 'A');
      assert.equal(after.boot.oneShot, null);
      assert.equal(after.phase, 'Idle');
      assert.deepEqual(after.last && [after.last.operationId, after.last.kind, after.last.result], [
        operationId,
        'upgrade',
        'Succeeded',
      ]);
    });

    it('prints the journal of every operation, across reboots, with molt node logs', async () => {
      const ops = JSON.parse((await machine.molt(['node', 'operations', '-o', 'json'])).stdout) as {
        operationId: string;
        events: number;
      }[];
      const r = await machine.molt(['node', 'logs', '-o', 'json']);
      assert.equal(r.code, 0, r.stderr);
      const events = parseEvents(r.stdout);
      for (const op of ops) {
        const seqs = events.filter((e) => e.operationId === op.operationId).map((e) => e.seq);
        assert.deepEqual(
          seqs,
          Array.from({ length: op.events }, (_, i) => i + 1),
          `every event of ${op.operationId} once, in order`,
        );
      }
      assert.equal(
        events.length,
        ops.reduce((n, op) => n + op.events, 0),
      );
      assert.ok(ops.length >= 9, `one entry per operation run on this machine: ${ops.length}`);
      const tail = parseEvents(
        (await machine.molt(['node', 'logs', '--tail', '1', '-o', 'json'])).stdout,
      );
      assert.deepEqual(tail, events.slice(-1));
      assert.equal(tail[0]?.kind, 'result');
    });
  });
}
