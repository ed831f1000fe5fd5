// SPDX-License-Identifier: Apache-2.0
/**
 * P8: a control-plane rolling upgrade of three lab machines that host the Kubernetes
 * cluster (an etcd 3.5 member and a kube-apiserver each, behind a loopback TCP balancer) while a
 * client creates a ConfigMap every 100 ms through the balancer. A write may be retried for up to
 * 5 s (a reconnect to another API server); one that still fails counts as failed. Target: 0.
 * Same run as test/integration/kube/hosted-control-plane.test.ts.
 */
import { rollingUpgrade, startHostedCluster } from '../test/integration/kube/hosted-cluster.ts';

export async function runP8(): Promise<void> {
  const cluster = await startHostedCluster();
  try {
    const r = await rollingUpgrade(cluster, '1.1.0');
    for (const u of r.upgrades)
      if (u.code !== 0) throw new Error(`upgrading ${u.name} failed: ${u.stderr}`);
    const row = (k: string, v: string): string => `${k.padEnd(34)}${v}\n`;
    process.stdout.write(
      [
        'P8 — control-plane rolling upgrade (3 lab machines hosting etcd + kube-apiserver)\n',
        row('upgrade of 3 machines', `${r.seconds.toFixed(1)} s`),
        row('writes through the balancer', String(r.writes)),
        row('failed (after 15 s of retries)', String(r.failed)),
        row('attempts retried (reconnects)', String(r.retries)),
        row('slowest write', `${String(r.slowestMs)} ms`),
        row('fewest members with a leader', `${String(r.fewestWithLeader)} of 3`),
        row('polls in a row without (hand-over)', String(r.longestBadRun)),
        row('connections per API server', JSON.stringify([...cluster.balancer.handed.values()])),
      ].join(''),
    );
    process.stdout.write(`BENCH P8 failed_writes=${String(r.failed)} writes=${String(r.writes)}\n`);
  } finally {
    await cluster.stop();
  }
}
