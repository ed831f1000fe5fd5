// SPDX-License-Identifier: Apache-2.0
// Issue 5: three lab control-plane machines host the Kubernetes cluster itself — an etcd member and
// a kube-apiserver each, run and stopped by their agents, behind a loopback TCP balancer — and are
// upgraded one at a time while a client keeps writing through the balancer: no write fails beyond
// brief reconnects, and etcd never loses quorum. (`npm run bench -- P8` measures the same run.)
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { CoreV1Api } from '@kubernetes/client-node';
import { loadKubeConfig } from '../../../src/platform/kube/client.ts';
import { rollingUpgrade, startHostedCluster, type HostedCluster } from './hosted-cluster.ts';

let c: HostedCluster;

/** The machine's running kube-apiserver (its agent's PID file), checked to be alive. */
async function apiserverPid(m: { root: string }): Promise<number> {
  const pid = Number((await readFile(join(m.root, 'run', 'kube-apiserver.pid'), 'utf8')).trim());
  process.kill(pid, 0);
  return pid;
}

before(async () => {
  c = await startHostedCluster();
});

after(async () => {
  await (c as HostedCluster | undefined)?.stop();
});

describe('a Kubernetes control plane hosted by three lab machines', () => {
  it('serves the API through the balancer from every machine’s own API server', async () => {
    const core = (await loadKubeConfig(c.kube.admin.kubeconfig)).makeApiClient(CoreV1Api);
    for (let i = 0; i < 6; i++) await core.listNamespace();
    for (const m of c.machines.machines)
      assert.equal((await m.status()).version, '1.0.0', `${m.name} booted 1.0.0`);
    assert.ok(
      [...c.balancer.handed.values()].filter((n) => n > 0).length >= 2,
      `connections went to several API servers: ${JSON.stringify([...c.balancer.handed])}`,
    );
  });

  it('upgrades the machines one at a time with no failed write and etcd quorum kept', async () => {
    const before = await Promise.all(c.machines.machines.map(apiserverPid));
    const r = await rollingUpgrade(c, '1.1.0');
    process.stderr.write(
      `hosted control plane: ${r.seconds.toFixed(1)} s, ${String(r.writes)} writes, ${String(r.failed)} failed, ${String(r.retries)} retried, slowest ${String(r.slowestMs)} ms, fewest members with a leader ${String(r.fewestWithLeader)}, longest run of polls without a quorum knowing one ${String(r.longestBadRun)}\n`,
    );
    for (const u of r.upgrades) assert.equal(u.code, 0, `${u.name}: ${u.stderr}`);
    assert.equal(r.upgrades.length, 3);
    for (const m of c.machines.machines) assert.equal((await m.status()).version, '1.1.0');
    const after = await Promise.all(c.machines.machines.map(apiserverPid));
    for (const [i, pid] of after.entries())
      assert.notEqual(pid, before[i], 'each API server really went down with its machine');
    assert.ok(r.writes > 50, `the client kept writing (${String(r.writes)})`);
    assert.equal(r.failed, 0, `failed writes; last error: ${r.lastError ?? '-'}`);
    assert.ok(
      r.longestBadRun <= 1,
      `a quorum of members knew a leader but for single polls (hand-overs); ${String(r.longestBadRun)} polls in a row without: ${r.worstPoll}`,
    );
  });
});
