// SPDX-License-Identifier: Apache-2.0
// Crash tests in the control-plane phases (docs/adr/0004 §5): on three `molt lab machine
// --control-plane` machines with a real 3-member etcd cluster, the agent of one machine is killed
// (SIGKILL) around the steps only control-plane machines take — the cluster lease, the quorum
// check, stopping etcd, leaving and rejoining the cluster, releasing the lease. Every time the
// upgrade must resume and finish, the lease must end released, and the cluster must end with all
// three members healthy voters and the data written before it intact.
import assert from 'node:assert/strict';
import { access, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Etcd3 } from 'etcd3';
import { createEtcdClusterLease } from '../../../src/agent/adapters/etcd/cluster-lease.ts';
import { createRegistryClient } from '../../../src/oci/index.ts';
import { pushInstallerImage } from '../../../src/testkit/installer-image.ts';
import { eventually, tempDir } from '../../../src/platform/process/managed-process.ts';
import { startRegistry, type RunningRegistry } from '../../../src/testkit/registry-process.ts';
import {
  memberList,
  readThrough,
  startControlPlaneCluster,
  waitClusterHealthy,
  type ControlPlaneCluster,
} from '../../../src/lab/fleet/control-plane.ts';
import { createFleetPki } from './harness.ts';
import { assertWhole } from './whole.ts';
import { moltArgv } from '../../../src/testkit/molt-entry.ts';

const repo = 'molt/installer';
/** Control-plane-only steps, each killed before or after its commands; `--no-preserve` where etcd membership is left. */
const faults: readonly { readonly fault: string; readonly noPreserve?: boolean }[] = [
  { fault: 'AcquiringLease:after' },
  { fault: 'CheckingQuorum:before' },
  { fault: 'CheckingQuorum:after' },
  { fault: 'StoppingServices:after' },
  { fault: 'LeavingEtcd:before', noPreserve: true },
  { fault: 'LeavingEtcd:after', noPreserve: true },
  { fault: 'Rejoining:before', noPreserve: true },
  { fault: 'Rejoining:after' },
  { fault: 'ReleasingLease:before' },
  { fault: 'ReleasingLease:after' },
];

let registry: RunningRegistry;
let scratch: { path: string; remove: () => Promise<void> };
let cluster: ControlPlaneCluster;
const image = (version: string): string => `${registry.host}/${repo}:${version}`;

before(async () => {
  registry = await startRegistry();
  scratch = await tempDir('lab-cp-crash');
  const client = createRegistryClient({ registry: registry.host, insecure: true });
  for (const version of ['1.0.0', '2.0.0'])
    await pushInstallerImage(client, repo, version, { version });
  await client.close();
  const pki = await createFleetPki(join(scratch.path, 'pki'));
  cluster = await startControlPlaneCluster({
    molt: moltArgv,
    dir: scratch.path,
    pki,
    image: image('1.0.0'),
    // Every fault here ends in a success: a kill and its restart (18 s once under CI's load, past
    // the lab's 20 s) must not spend the new slot's health deadline.
    healthDeadlineSeconds: 60,
  });
  const writer = new Etcd3({ hosts: [...cluster.endpoints] });
  await writer.put('/test/crash/before').value('kept');
  writer.close();
});

after(async () => {
  await (cluster as ControlPlaneCluster | undefined)?.stop();
  await registry.stop();
  await scratch.remove();
});

async function leaseHolder(): Promise<string | undefined> {
  const observer = createEtcdClusterLease({ endpoints: cluster.endpoints, holder: 'observer' });
  try {
    return (await observer.holder())?.holder;
  } finally {
    await observer.close();
  }
}

describe('agent killed in the control-plane steps of an upgrade (real etcd, 3 members)', () => {
  for (const [i, { fault, noPreserve }] of faults.entries()) {
    it(`${fault}${noPreserve === true ? ' (--no-preserve)' : ''}: resumes, finishes, releases the lease, keeps quorum and data`, async () => {
      const machine = cluster.machines[i % cluster.machines.length]!;
      const before = await machine.status();
      const target = before.version === '1.0.0' ? '2.0.0' : '1.0.0';
      await writeFile(join(machine.root, 'state', 'lab-fault'), fault);
      const r = await machine.molt([
        'node',
        'upgrade',
        '--image',
        image(target),
        ...(noPreserve === true ? ['--no-preserve'] : []),
        '--follow',
        '-o',
        'json',
      ]);
      const operationId = (JSON.parse(r.stdout.split('\n')[0] ?? '{}') as { operationId?: string })
        .operationId;
      await access(join(machine.root, 'state', `fault-fired-${fault.replaceAll(':', '-')}`));
      const status = await machine.status();
      assert.equal(r.code, 0, `molt node upgrade --follow: ${r.stdout}\n${r.stderr}`);
      assertWhole(status, operationId ?? '');
      assert.equal(status.last?.result, 'Succeeded', `${r.stdout}${r.stderr}`);
      assert.equal(status.version, target);
      await eventually(
        async () => {
          assert.equal(await leaseHolder(), undefined, 'the upgrade lease is released');
        },
        { timeoutMs: 10_000, intervalMs: 200 },
      );
      await waitClusterHealthy(cluster.endpoints);
      const names = (await memberList(cluster.endpoints)).map((m) => m.name).sort();
      assert.deepEqual(names, ['cp-1', 'cp-2', 'cp-3']);
      for (const endpoint of cluster.endpoints)
        assert.equal(await readThrough(endpoint, '/test/crash/before'), 'kept');
    });
  }
});
