// SPDX-License-Identifier: Apache-2.0
// Issue 18 (docs/adr/0012 §6): a hosted cluster whose Kubernetes is down — kube-apiserver stopped
// on every control-plane machine, two of the three etcd members' data wiped — is brought back
// from a snapshot taken before, with the molt commands alone (`molt node etcd snapshot`,
// `molt node service stop|start`, `molt cluster recover`) through the agents' mutual-TLS API.
import assert from 'node:assert/strict';
import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { CoreV1Api } from '@kubernetes/client-node';
import { memberList, waitClusterHealthy } from '../../../src/lab/fleet/control-plane.ts';
import { runMolt, type MoltRun } from '../../../src/lab/fleet/machine.ts';
import { loadKubeConfig } from '../../../src/platform/kube/client.ts';
import { eventually, tempDir } from '../../../src/platform/process/managed-process.ts';
import { issueToDir } from '../../../src/platform/pki/store.ts';
import { moltArgv } from '../../../src/testkit/molt-entry.ts';
import { startHostedCluster, type HostedCluster } from './hosted-cluster.ts';

let c: HostedCluster;
let scratch: { path: string; remove(): Promise<void> };
let admin: Record<string, string>;

before(async () => {
  c = await startHostedCluster();
  scratch = await tempDir('kube-recovery');
  await issueToDir({
    caDir: c.pki.dir,
    outDir: scratch.path,
    role: 'admin',
    name: 'admin',
    sans: [],
    days: 1,
  });
  admin = {
    MOLT_CERT: join(scratch.path, 'admin.pem'),
    MOLT_KEY: join(scratch.path, 'admin.key'),
    MOLT_CA: join(c.pki.dir, 'ca.pem'),
    // `molt cluster recover` checks the snapshot with etcdutl where it finds one.
    MOLT_ETCDUTL: join(c.kube.bins, 'etcdutl'),
  };
});

after(async () => {
  await (c as HostedCluster | undefined)?.stop();
  await scratch.remove();
});

/** `molt ARGS` as an admin; fails the test unless it exits 0. */
async function molt(args: readonly string[]): Promise<MoltRun> {
  const r = await runMolt(moltArgv, args, admin);
  assert.equal(r.code, 0, `molt ${args.join(' ')}: ${r.stderr}`);
  return r;
}

describe('recovery with Kubernetes down, through the agents only', () => {
  it('restores etcd from a snapshot and rejoins the wiped members; the objects of the snapshot are back', async () => {
    const core = (await loadKubeConfig(c.kube.admin.kubeconfig)).makeApiClient(CoreV1Api);
    const namespace = 'recovery';
    const cm = (name: string) => ({ namespace, body: { metadata: { name }, data: { n: name } } });
    await core.createNamespace({ body: { metadata: { name: namespace } } });
    await core.createNamespacedConfigMap(cm('before-snapshot'));
    const [first, ...others] = c.machines.machines;
    assert.ok(first !== undefined && others.length === 2);
    const snapshot = join(scratch.path, 'etcd.snapshot');
    await molt(['node', 'etcd', 'snapshot', '--output', snapshot, '--endpoint', first.apiUrl]);
    await core.createNamespacedConfigMap(cm('after-snapshot'));

    // An operator certificate may look but not act.
    const refused = await runMolt(
      moltArgv,
      ['node', 'service', 'stop', 'kube-apiserver', '--endpoint', first.apiUrl],
      c.pki.operatorEnv,
    );
    assert.match(refused.stderr, /MOLT_FORBIDDEN/);

    // Kubernetes down everywhere; two members' data gone.
    for (const m of c.machines.machines)
      await molt(['node', 'service', 'stop', 'kube-apiserver', '--endpoint', m.apiUrl]);
    for (const m of others) {
      await molt(['node', 'service', 'stop', 'etcd', '--endpoint', m.apiUrl]);
      await rm(join(m.root, 'ephemeral', 'etcd'), { recursive: true, force: true });
    }
    const down = await molt(['node', 'service', 'list', '-o', 'json', '--endpoint', first.apiUrl]);
    assert.deepEqual(
      (JSON.parse(down.stdout) as { name: string; running: boolean }[])
        // The controller-manager and scheduler may exit once their leader Lease cannot be renewed.
        .filter((s) => s.name === 'etcd' || s.name === 'kube-apiserver')
        .map((s) => [s.name, s.running]),
      [
        ['etcd', true],
        ['kube-apiserver', false],
      ],
    );

    const started = performance.now();
    const recover = await molt([
      ...['cluster', 'recover', '--etcd-snapshot', snapshot],
      ...c.machines.machines.flatMap((m) => ['--machine', m.apiUrl]),
    ]);
    process.stderr.write(
      `recover: ${((performance.now() - started) / 1000).toFixed(1)} s\n${recover.stdout}`,
    );
    assert.match(recover.stdout, /^snapshot .*: \d+ bytes, revision \d+, \d+ keys$/m);
    for (const m of c.machines.machines)
      for (const component of ['kube-apiserver', 'kube-controller-manager', 'kube-scheduler'])
        await molt(['node', 'service', 'start', component, '--endpoint', m.apiUrl]);

    await waitClusterHealthy(c.machines.endpoints, 60_000);
    const members = await memberList(c.machines.endpoints);
    assert.deepEqual(members.map((m) => m.name).sort(), ['cp-1', 'cp-2', 'cp-3']);
    assert.ok(members.every((m) => !m.isLearner));
    await eventually(
      async () => {
        const back = await core.readNamespacedConfigMap({ namespace, name: 'before-snapshot' });
        assert.equal(back.data?.['n'], 'before-snapshot');
      },
      { timeoutMs: 60_000, intervalMs: 500 },
    );
    await assert.rejects(
      core.readNamespacedConfigMap({ namespace, name: 'after-snapshot' }),
      (e: { code?: number }) => e.code === 404,
      'what was written after the snapshot is gone: the data is the snapshot’s',
    );
    // Never deleted: the restored machine's old data dir is kept aside.
    const kept = (await readdir(join(first.root, 'ephemeral'))).filter((n) =>
      n.startsWith('etcd.pre-restore-'),
    );
    assert.equal(kept.length, 1, `kept aside: ${kept.join(', ')}`);
  });
});
