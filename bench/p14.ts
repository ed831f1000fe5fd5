// SPDX-License-Identifier: Apache-2.0
/**
 * P14 (docs/adr/0018): the self-hosted OS rollout — the operator's two replicas running as pods on
 * the two VM nodes they upgrade — against the same rollout driven by an operator outside the
 * cluster, on the same VMs, in one run.
 *
 * Setup: `molt lab up --vms 2 --workers 0 --operator cluster --fast --network netns`: vm-1 and
 * vm-2 are real nodes, the only ones the lab's workloads and the operator's pods run on.
 *
 * - self-hosted: `molt lab publish 1.1.0 --vm`; the in-cluster operator rolls pool `vms` (canary,
 *   then the other VM): each node is drained, so each replica is evicted in turn and the Lease
 *   changes hands on the way.
 * - outside: the Deployment scaled to 0, then a `molt operator` process on the host with the same
 *   config (the same fleet at the same bridge addresses, the same OperatorRecords through the API
 *   server), and `molt lab publish 1.2.0 --vm`: the same kind of transition on the same VMs.
 * - Each side is timed from the publish's return (the release in the registry) to the rollout's
 *   `Completed` in the store, polled every second; ratio = self-hosted / outside (target ≤ 1.15).
 * - duplicate_starts: start records beyond one per machine of the self-hosted rollout (target 0);
 *   lost_machines: its machines that did not end Succeeded (target 0); failed_api_writes: writes
 *   to molt.dev objects the API server answered with an error during its window
 *   (`apiserver_request_total`, any code but 2xx — a 409 is a lost compare-and-swap), the
 *   outside side's beside it.
 *
 * One run (tens of minutes under TCG). `MOLT_BENCH_KEEP=1` keeps the lab directory.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parse, stringify } from 'yaml';
import { OperatorName, OperatorNamespace } from '../src/lab/cluster-operator.ts';
import { labPublish } from '../src/lab/publish.ts';
import type { LabState } from '../src/lab/state.ts';
import { createKubeOperatorStore } from '../src/operator/adapters/kube-store/operator-store.ts';
import { loadKubeConfig } from '../src/platform/kube/client.ts';
import { startProcess } from '../src/platform/process/managed-process.ts';
import { freePort } from '../src/platform/process/free-port.ts';
import { startsPerMachine } from '../src/testkit/rollout-timing.ts';
import { kubectl } from './p13-by-hand.ts';
import { moltArgv, withVmLab } from './vm-lab.ts';

const Minutes = 60_000;

interface Side {
  readonly name: string;
  readonly seconds: number;
  readonly duplicates: number;
  readonly lost: number;
  readonly failedWrites: number;
  readonly holders: number;
}

/** Writes to molt.dev objects the API server answered with an error, so far. */
async function failedMoltWrites(lab: LabState): Promise<number> {
  const metrics = await kubectl(lab, ['get', '--raw', '/metrics']);
  let n = 0;
  for (const m of metrics.matchAll(/^apiserver_request_total\{([^}]*)\} (\d+)/gm)) {
    const labels = m[1] ?? '';
    if (!labels.includes('group="molt.dev"')) continue;
    if (!/verb="(POST|PUT|PATCH|DELETE|APPLY)"/.test(labels)) continue;
    if (/code="2\d\d"/.test(labels)) continue;
    n += Number(m[2]);
  }
  return n;
}

/** The Lease's holder now ('' when none). */
async function holder(lab: LabState): Promise<string> {
  const out = await kubectl(lab, [
    ...['-n', OperatorNamespace, 'get', 'lease', OperatorName],
    ...['-o', 'jsonpath={.spec.holderIdentity}'],
  ]).catch(() => '');
  return out.trim();
}

/** Publish `version` for the VMs and follow the operator's rollout of it in the store to its end. */
async function side(lab: LabState, name: string, version: string): Promise<Side> {
  await labPublish(
    lab.dir,
    { version, broken: false, vm: true, molt: moltArgv, log: () => undefined },
    { out: () => undefined, err: () => undefined },
  );
  const writes = await failedMoltWrites(lab);
  const t = performance.now();
  const store = createKubeOperatorStore({
    kc: await loadKubeConfig(lab.kubeconfig ?? ''),
    namespace: OperatorNamespace,
  });
  const holders = new Set<string>();
  try {
    for (const deadline = Date.now() + 90 * Minutes; Date.now() < deadline;) {
      holders.add(await holder(lab));
      const read = await store.read().catch(() => undefined);
      const rollout = read?.rollouts.find((r) => r.pool === 'vms' && r.target.version === version);
      if (
        read !== undefined &&
        rollout !== undefined &&
        !['Active', 'Paused', 'AwaitingApproval'].includes(rollout.state)
      ) {
        const seconds = (performance.now() - t) / 1000;
        const counts = startsPerMachine(read.starts.filter((s) => s.rollout === rollout.id));
        const phases = Object.values(rollout.machines);
        process.stderr.write(
          `${name}: ${rollout.id} ${rollout.state} after ${seconds.toFixed(0)} s\n`,
        );
        return {
          name,
          seconds,
          duplicates: [...counts.values()].reduce((a, n) => a + n - 1, 0),
          lost: phases.filter((p) => p.phase !== 'Succeeded').length,
          failedWrites: (await failedMoltWrites(lab)) - writes,
          holders: [...holders].filter((h) => h !== '').length,
        };
      }
      await sleep(1_000);
    }
    throw new Error(`${name}: the rollout of ${version} did not end in 90 min`);
  } finally {
    await store.close();
  }
}

/** The in-cluster operator's config as a host process runs it: host paths, loopback listeners. */
async function outsideConfig(lab: LabState): Promise<string> {
  const dir = join(lab.dir, 'operator');
  const text = (await readFile(join(dir, 'operator.yaml'), 'utf8'))
    .replaceAll('/etc/molt/config', dir)
    .replaceAll('/etc/molt/pki', join(dir, 'pki'));
  const config = parse(text) as Record<string, unknown>;
  delete config['dashboard'];
  delete config['health'];
  config['listen'] = { host: '127.0.0.1', port: await freePort() };
  config['kubernetes'] = {
    ...(config['kubernetes'] as object),
    kubeconfig: join(lab.dir, 'kube', 'molt-operator.kubeconfig'),
  };
  const file = join(lab.dir, 'outside-operator.yaml');
  await writeFile(file, stringify(config));
  return file;
}

const scale = (lab: LabState, replicas: number): Promise<string> =>
  kubectl(lab, [
    ...['-n', OperatorNamespace, 'scale', 'deployment', OperatorName],
    `--replicas=${String(replicas)}`,
  ]);

async function measure(lab: LabState): Promise<void> {
  const selfHosted = await side(lab, 'self-hosted', '1.1.0');
  await scale(lab, 0);
  await kubectl(lab, [
    ...['-n', OperatorNamespace, 'wait', '--for=delete', 'pod'],
    ...['-l', `app.kubernetes.io/name=${OperatorName}`, '--timeout=300s'],
  ]);
  const [node = process.execPath, entry = ''] = moltArgv;
  const operator = startProcess('molt operator (outside)', node, [
    ...[entry, 'operator', '--config', await outsideConfig(lab)],
  ]);
  try {
    await operator.waitFor(/leading as/, 5 * Minutes);
    const outside = await side(lab, 'outside', '1.2.0');
    report(selfHosted, outside);
  } finally {
    await operator.stop();
    await scale(lab, 2);
  }
}

function report(a: Side, b: Side): void {
  const row = (s: Side) =>
    `${s.name.padEnd(12)} ${s.seconds.toFixed(0).padStart(6)} s  duplicates ${String(s.duplicates)}  lost ${String(s.lost)}  failed molt.dev writes ${String(s.failedWrites)}  Lease holders ${String(s.holders)}\n`;
  process.stdout.write(
    `P14 — an OS rollout of 2 VM nodes, by the operator running on them vs. one outside the cluster\n${row(a)}${row(b)}`,
  );
  process.stdout.write(
    `BENCH P14 ratio=${(a.seconds / b.seconds).toFixed(2)} duplicate_starts=${String(a.duplicates)} ` +
      `lost_machines=${String(a.lost)} failed_api_writes=${String(a.failedWrites)} ` +
      `self_hosted_s=${a.seconds.toFixed(0)} outside_s=${b.seconds.toFixed(0)} outside_failed_api_writes=${String(b.failedWrites)}\n`,
  );
}

/** Run P14 and print its table and `BENCH P14 …` line. */
export async function runP14(): Promise<void> {
  await withVmLab('p14', { network: 'netns', operator: 'cluster' }, async (lab, up) => {
    process.stdout.write(`lab up (2 VM nodes, the operator in the cluster): ${up.toFixed(0)} s\n`);
    await measure(lab);
  });
}
