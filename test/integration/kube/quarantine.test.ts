// SPDX-License-Identifier: Apache-2.0
// A pool's drain policy `quarantine-and-skip` end to end: two lab workers are the
// nodes of a real Kubernetes control plane, and a PodDisruptionBudget that allows no disruption
// pins one pod to whichever node it landed on. The real `molt operator` rolls 1.1.0 out with
// `drain: {timeout: 3s, onTimeout: quarantine-and-skip}`: the blocked node's drain times out, the
// node stays cordoned and labelled `molt.dev/quarantined`, the machine is recorded Skipped — not a
// failure — and the rollout goes on to the other worker and completes.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import type { KubeConfig } from '@kubernetes/client-node';
import { loadKubeConfig } from '../../../src/platform/kube/client.ts';
import { QuarantineLabel } from '../../../src/agent/adapters/kube-node/drain.ts';
import type { RolloutView } from '../../../src/protocol/operator.ts';
import {
  startKubeControlPlane,
  type KubeControlPlane,
} from '../../../src/lab/services/kube-control-plane.ts';
import {
  eventually,
  startProcess,
  type ManagedProcess,
} from '../../../src/platform/process/managed-process.ts';
import { official, startLabFleet, type WorkerFleet } from '../../../src/lab/fleet/fleet.ts';
import { workloads } from '../../../src/lab/fleet/workloads.ts';
import { writeOperatorFiles } from '../../../src/lab/fleet/operator-files.ts';
import { OperatorDashboardPrefix } from '../../../src/protocol/operator.ts';
import { moltEntry } from '../lab/harness.ts';
import { moltArgv } from '../../../src/testkit/molt-entry.ts';

const run = promisify(execFile);
const deploy = join(import.meta.dirname, '../../../deploy/kubernetes');
let cp: KubeControlPlane;
let admin: KubeConfig;
let fleet: WorkerFleet;
let operator: ManagedProcess | undefined;
let dashboard: string;

const kubectl = async (...args: string[]): Promise<string> =>
  (await run(join(cp.bins, 'kubectl'), ['--kubeconfig', cp.admin.kubeconfig, ...args])).stdout;

before(async () => {
  cp = await startKubeControlPlane({ nodes: ['w-1', 'w-2'] });
  admin = await loadKubeConfig(cp.admin.kubeconfig);
  for (const manifest of ['rbac.yaml', 'operator-rbac.yaml'])
    await kubectl('apply', '-f', join(deploy, manifest));
  fleet = await startLabFleet({
    molt: moltArgv,
    workers: 2,
    controlPlane: false,
    kubernetes: (name) => ({
      kubeconfig: cp.agent(name).kubeconfig,
      labKubelet: { kubeconfig: cp.node(name).kubeconfig },
      drain: { timeoutSeconds: 120 },
    }),
  });
  const config = await writeOperatorFiles(fleet, {
    fleetPolicies: [],
    pools: [
      {
        name: 'workers',
        channel: 'stable',
        drain: { timeout: '3s', onTimeout: 'quarantine-and-skip' },
        policies: [{ concurrency: 1 }],
      },
    ],
    config: {
      id: 'operator-quarantine',
      dashboard: { listen: { host: '127.0.0.1', port: 0 }, anonymousRead: true },
      kubernetes: { kubeconfig: cp.operator.kubeconfig, namespace: 'molt-system' },
    },
  });
  operator = startProcess('molt operator', process.execPath, [
    moltEntry,
    'operator',
    '--config',
    config,
  ]);
  dashboard =
    (await operator.waitFor(new RegExp(`${OperatorDashboardPrefix}(\\S+)`), 60_000))[1] ?? '';
  await operator.waitFor(/leading as/, 60_000);
});

after(async () => {
  await operator?.stop(10_000);
  await (fleet as WorkerFleet | undefined)?.stop();
  await (cp as KubeControlPlane | undefined)?.stop();
});

async function rollout(): Promise<RolloutView | undefined> {
  const list = (await (await fetch(new URL('/v1/rollouts', dashboard))).json()) as { id: string }[];
  const id = list[0]?.id;
  if (id === undefined) return undefined;
  return (await (await fetch(new URL(`/v1/rollouts/${id}`, dashboard))).json()) as RolloutView;
}

describe('quarantine-and-skip through the operator', () => {
  it('skips the node whose drain the budget blocks, and completes the rollout on the rest', async () => {
    const w = workloads(admin);
    const ns = await w.namespace('pinned');
    await w.deployment(ns, 'solo', 1);
    await w.running(ns, 1);
    await w.pdb(ns, 'solo', 'solo', 1);
    const blocked = (await w.pods(ns))[0]?.spec?.nodeName ?? '';
    const free = blocked === 'w-1' ? 'w-2' : 'w-1';
    assert.match(blocked, /^w-[12]$/);

    await fleet.publish('1.1.0', { ...official, 'dev.molt.channels': 'stable' });
    const done = await eventually(
      async () => {
        const r = await rollout();
        assert.ok(r?.state === 'Completed', JSON.stringify(r?.machines));
        return r;
      },
      { timeoutMs: 180_000, intervalMs: 1_000 },
    );
    const phase = (id: string) => done.machines.find((m) => m.machine === id);
    assert.equal(phase(blocked)?.phase, 'Skipped');
    assert.match(phase(blocked)?.reason ?? '', /MOLT_DRAIN_QUARANTINED/);
    assert.equal(phase(free)?.phase, 'Succeeded');
    assert.deepEqual(
      [done.counts.Skipped, done.counts.Failed, done.counts.RolledBack, done.counts.Succeeded],
      [1, 0, 0, 1],
    );

    const node = JSON.parse(await kubectl('get', 'node', blocked, '-o', 'json')) as {
      spec?: { unschedulable?: boolean };
      metadata: { labels: Record<string, string> };
    };
    assert.equal(node.spec?.unschedulable, true, 'the quarantined node stays cordoned');
    assert.ok(node.metadata.labels[QuarantineLabel], 'and is labelled for a person to look at');
    assert.equal(node.metadata.labels['molt.dev/version'], '1.0.0', 'unchanged');
    const upgraded = (await fleet.workers.find((m) => m.id === free)?.status())?.version;
    assert.equal(upgraded, '1.1.0');
    const row = new RegExp(
      `^${blocked}\\s+workers\\s+worker\\s+1\\.0\\.0\\s+1\\.1\\.0\\s+Quarantined`,
      'm',
    );
    await eventually(
      async () => {
        assert.match(await kubectl('get', 'nodeupgrades.molt.dev', '-n', 'molt-system'), row);
      },
      { timeoutMs: 15_000, intervalMs: 500 },
    );
  });
});
