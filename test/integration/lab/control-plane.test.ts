// SPDX-License-Identifier: Apache-2.0
// Control-plane safety on real etcd (docs/adr/0004 §5), end to end: three `molt lab machine
// --control-plane` machines whose agents run a real 3-member etcd cluster, upgraded through the
// `molt node` CLI. A rolling upgrade keeps quorum while a client writes; the cluster upgrade lease
// lets one control-plane node upgrade at a time; an upgrade that would lose quorum is refused
// before anything is disrupted; `--no-preserve` rejoins etcd as a new member; a dead holder's
// lease expires at its TTL.
import assert from 'node:assert/strict';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  createEtcdClusterLease,
  LeaseKey,
} from '../../../src/agent/adapters/etcd/cluster-lease.ts';
import { createRegistryClient } from '../../../src/oci/index.ts';
import type { AgentEvent, AgentStatus } from '../../../src/protocol/agent.ts';
import { pushInstallerImage } from '../../../src/testkit/installer-image.ts';
import { eventually, tempDir } from '../../../src/platform/process/managed-process.ts';
import { startRegistry, type RunningRegistry } from '../../../src/testkit/registry-process.ts';
import {
  memberList,
  readThrough,
  startControlPlaneCluster,
  waitClusterHealthy,
  type ControlPlaneCluster,
  type ControlPlaneMachine,
} from '../../../src/lab/fleet/control-plane.ts';
import { startEtcdWriter } from './etcd-writer.ts';
import { createFleetPki, type LabMachine } from './harness.ts';
import { moltArgv } from '../../../src/testkit/molt-entry.ts';

const repo = 'molt/installer';

/** The PID of the machine's etcd (run/etcd.pid), checked to be alive. */
async function etcdPid(machine: LabMachine): Promise<number> {
  const pid = Number((await readFile(join(machine.root, 'run', 'etcd.pid'), 'utf8')).trim());
  process.kill(pid, 0);
  return pid;
}
const versions = ['1.0.0', '1.1.0', '1.2.0', '1.3.0', '1.4.0', '1.5.0'];
let registry: RunningRegistry;
let scratch: { path: string; remove: () => Promise<void> };
let cluster: ControlPlaneCluster;
let cp1: ControlPlaneMachine;
let cp2: ControlPlaneMachine;
let cp3: ControlPlaneMachine;
/** Keys the writer of the rolling upgrade got acknowledged; they must survive every later test. */
let written: ReadonlyMap<string, string> = new Map();
const image = (version: string): string => `${registry.host}/${repo}:${version}`;
const suiteStart = performance.now();

before(async () => {
  registry = await startRegistry();
  scratch = await tempDir('lab-control-plane');
  const client = createRegistryClient({ registry: registry.host, insecure: true });
  for (const version of versions) await pushInstallerImage(client, repo, version, { version });
  await client.close();
  const pki = await createFleetPki(join(scratch.path, 'pki'));
  cluster = await startControlPlaneCluster({
    molt: moltArgv,
    dir: scratch.path,
    pki,
    image: image('1.0.0'),
  });
  [cp1, cp2, cp3] = cluster.machines as [
    ControlPlaneMachine,
    ControlPlaneMachine,
    ControlPlaneMachine,
  ];
});

after(async () => {
  await (cluster as ControlPlaneCluster | undefined)?.stop(); // undefined when the cluster failed to start
  await registry.stop();
  await scratch.remove();
  process.stderr.write(
    `control-plane suite: ${((performance.now() - suiteStart) / 1000).toFixed(1)} s\n`,
  );
});

interface Upgraded {
  readonly code: number;
  readonly stderr: string;
  readonly events: readonly AgentEvent[];
}

async function upgrade(
  machine: ControlPlaneMachine,
  version: string,
  extra: readonly string[] = [],
): Promise<Upgraded> {
  const r = await machine.molt([
    'node',
    'upgrade',
    '--image',
    image(version),
    '--follow',
    '-o',
    'json',
    ...extra,
  ]);
  const events = r.stdout
    .trim()
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as AgentEvent);
  return { code: r.code, stderr: r.stderr, events };
}

/** One line per event, errors cut short: enough to see where an operation went wrong. */
const describeEvents = (events: readonly AgentEvent[]): string =>
  events.map((e) => `${e.phase} ${e.kind} ${e.status}: ${e.message.slice(0, 300)}`).join('\n');

const phasesStarted = (events: readonly AgentEvent[]): string[] =>
  events.filter((e) => e.kind === 'phase' && e.status === 'started').map((e) => e.phase);

/** What "untouched" compares: the boot, both slots, the boot entries, and the running etcd. */
async function fingerprint(
  machine: ControlPlaneMachine,
): Promise<{ status: Partial<AgentStatus>; etcdPid: number }> {
  const { bootId, bootedSlot, version, slots, boot } = await machine.status();
  return { status: { bootId, bootedSlot, version, slots, boot }, etcdPid: await etcdPid(machine) };
}

async function assertSucceeded(
  machine: ControlPlaneMachine,
  r: Upgraded,
  version: string,
): Promise<AgentStatus> {
  assert.equal(r.code, 0, `${machine.name}: ${r.stderr}\n${describeEvents(r.events)}`);
  const status = await machine.status();
  assert.equal(status.last?.result, 'Succeeded');
  assert.equal(status.version, version);
  assert.equal(status.boot.committed, status.bootedSlot);
  return status;
}

async function assertDataIntact(endpoints: readonly string[]): Promise<void> {
  assert.ok(written.size > 0, 'the writer wrote something');
  for (const endpoint of endpoints) {
    const sample = [...written].filter((_, i) => i % 50 === 0);
    for (const [key, value] of sample)
      assert.equal(await readThrough(endpoint, key), value, `${key} through ${endpoint}`);
  }
}

describe('three control-plane lab machines on a real etcd cluster', () => {
  it('form a 3-member etcd cluster, every machine on 1.0.0 in slot A', async () => {
    const members = await memberList(cluster.endpoints);
    assert.deepEqual(members.map((m) => m.name).sort(), ['cp-1', 'cp-2', 'cp-3']);
    for (const m of cluster.machines) {
      const status = await m.status();
      assert.equal(status.role, 'control-plane');
      assert.deepEqual([status.bootedSlot, status.version], ['A', '1.0.0']);
    }
  });

  it('rolls 1.1.0 out one machine at a time while etcd keeps serving writes', async () => {
    const writer = startEtcdWriter(cluster.endpoints, '/test/rolling/');
    const results: Upgraded[] = [];
    try {
      for (const m of cluster.machines) results.push(await upgrade(m, '1.1.0'));
    } finally {
      const report = await writer.stop();
      written = report.written;
      const seconds = (report.stoppedAt - report.startedAt) / 1000;
      process.stderr.write(
        `rolling upgrade: ${seconds.toFixed(1)} s, ${report.successes.length} writes ok, ${report.failures} failed\n`,
      );
      assert.deepEqual(
        report.silentSeconds,
        [],
        `seconds without a successful write; last error: ${report.lastError ?? '-'}`,
      );
    }
    for (const [i, m] of cluster.machines.entries()) {
      const status = await assertSucceeded(m, results[i]!, '1.1.0');
      assert.equal(status.bootedSlot, 'B');
      assert.ok(
        phasesStarted(results[i]!.events).includes('AcquiringLease'),
        'the upgrade took the cluster lease',
      );
    }
    await waitClusterHealthy(cluster.endpoints);
    await assertDataIntact(cluster.endpoints);
  });

  it('lets only one of two concurrent control-plane upgrades proceed; the other is refused untouched, then succeeds', async () => {
    const before = { cp1: await fingerprint(cp1), cp2: await fingerprint(cp2) };
    const [r1, r2] = await Promise.all([upgrade(cp1, '1.2.0'), upgrade(cp2, '1.2.0')]);
    const [winner, loser, lost] = r1.code === 0 ? [cp1, cp2, r2] : [cp2, cp1, r1];
    await assertSucceeded(winner, winner === cp1 ? r1 : r2, '1.2.0');
    assert.equal(lost.code, 1, 'exactly one upgrade proceeds');
    const status = await loser.status();
    assert.equal(status.last?.result, 'Failed');
    assert.equal(status.last.code, 'MOLT_LEASE_HELD');
    assert.ok(
      lost.events.some((e) => e.error?.code === 'MOLT_LEASE_HELD'),
      'the event log says why',
    );
    assert.ok(!phasesStarted(lost.events).includes('Cordoning'), 'nothing was disrupted');
    assert.deepEqual(
      await fingerprint(loser),
      loser === cp1 ? before.cp1 : before.cp2,
      'same boot, slots, entries and etcd process',
    );

    await assertSucceeded(loser, await upgrade(loser, '1.2.0'), '1.2.0');
    await waitClusterHealthy(cluster.endpoints);
  });

  it('refuses an upgrade while another member is down, before disrupting anything; allows it once the member is back', async () => {
    const { bootId } = await cp3.agent();
    process.kill(await etcdPid(cp3), 'SIGKILL');
    const before = await fingerprint(cp1);
    const refused = await upgrade(cp1, '1.3.0');
    assert.equal(refused.code, 1);
    const status = await cp1.status();
    assert.equal(status.last?.result, 'Failed');
    assert.equal(status.last.code, 'MOLT_QUORUM_AT_RISK', 'another member is down: quorum at risk');
    const phases = phasesStarted(refused.events);
    assert.ok(phases.includes('CheckingQuorum'));
    assert.ok(
      !phases.includes('Cordoning') && !phases.includes('StoppingServices'),
      `no disruption: ${phases.join(', ')}`,
    );
    assert.deepEqual(await fingerprint(cp1), before);
    assert.equal(
      await readThrough(cluster.endpoints[0]!, LeaseKey),
      null,
      'the refused upgrade let the lease go',
    );

    // Power-cycle cp-3: its agent boots again and starts its member.
    process.kill(cp3.process.pid, 'SIGUSR1');
    await cp3.agent(bootId);
    await waitClusterHealthy(cluster.endpoints);
    await assertSucceeded(cp1, await upgrade(cp1, '1.3.0'), '1.3.0');
  });

  it('wipes EPHEMERAL on --no-preserve and rejoins etcd as a new member, the data intact', async () => {
    await mkdir(join(cp2.root, 'ephemeral', 'data'), { recursive: true });
    await writeFile(join(cp2.root, 'ephemeral', 'data', 'kept'), 'workload data');
    const idBefore = (await memberList(cluster.endpoints)).find((m) => m.name === 'cp-2')?.ID;
    const r = await upgrade(cp2, '1.3.0', ['--no-preserve']);
    await assertSucceeded(cp2, r, '1.3.0');
    assert.ok(phasesStarted(r.events).includes('LeavingEtcd'));
    await assert.rejects(readFile(join(cp2.root, 'ephemeral', 'data', 'kept')), { code: 'ENOENT' });
    await waitClusterHealthy(cluster.endpoints);
    const members = await memberList(cluster.endpoints);
    const idAfter = members.find((m) => m.name === 'cp-2')?.ID;
    assert.ok(
      idAfter !== undefined && idAfter !== idBefore,
      `a new member id (${String(idBefore)} → ${String(idAfter)})`,
    );
    assert.deepEqual(members.map((m) => [m.name, m.isLearner]).sort(), [
      ['cp-1', false],
      ['cp-2', false],
      ['cp-3', false],
    ]);
    await assertDataIntact(cluster.endpoints);
  });

  it('lets another machine upgrade once a dead holder’s lease has expired', async () => {
    // A holder that dies: it took the lease with a short TTL, then stopped renewing it.
    const ghost = createEtcdClusterLease({
      endpoints: cluster.endpoints,
      holder: 'ghost',
      ttlSeconds: 6,
    });
    await ghost.acquire('op-ghost');
    await ghost.close();
    const refused = await upgrade(cp2, '1.4.0');
    assert.equal(refused.code, 1);
    assert.equal((await cp2.status()).last?.code, 'MOLT_LEASE_HELD');
    await eventually(
      async () => {
        assert.equal(await readThrough(cluster.endpoints[0]!, LeaseKey), null);
      },
      { timeoutMs: 10_000, intervalMs: 200 },
    );
    // cp-2 rejoined as a new member in the last test: its etcd must start again after this reboot.
    await assertSucceeded(cp2, await upgrade(cp2, '1.4.0'), '1.4.0');
    await waitClusterHealthy(cluster.endpoints);
    await assertDataIntact(cluster.endpoints);
  });
});
