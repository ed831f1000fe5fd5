// SPDX-License-Identifier: Apache-2.0
/**
 * P13 (docs/adr/0015): one real worker VM upgraded under live pods — a Deployment and a
 * StatefulSet, each under a PodDisruptionBudget — by molt, against the same work done by hand on
 * the same kind of VM in the same lab, in one run.
 *
 * Setup: `molt lab up --vms 2 --workers 0 --fast --network loopback` with Kubernetes: vm-1 and
 * vm-2 are real nodes (containerd 2, release 1.0.0's kubelet, the previous minor), the only ones
 * the lab's workloads run on — shop/web (Deployment, 6, minAvailable 5) and shop/db (StatefulSet,
 * 3, minAvailable 2) — so a drained node's pods have exactly one place to go.
 *
 * Both sides do the same work: the same transition (release 1.0.0 → the same 1.1.0 image, by
 * digest, so the kubelet moves a minor too), on a node holding all nine pods, the other node
 * empty and schedulable. So before the molt side vm-2 is drained and uncordoned (untimed), and
 * held (`molt machine hold`: the planner never picks a held machine, so the canary is vm-1, the
 * node with the pods; the hold is released before the by-hand side); molt's drain then moves all
 * nine to vm-2, which the by-hand side upgrades next.
 *
 * - molt: `molt lab publish 1.1.0 --vm` (labPublish); the operator's rollout of pool `vms`
 *   (canary 1, then concurrency 2) starts vm-1: cordon, drain through the budgets, stop the node
 *   runtime, write, reboot, health (the Node Ready on the new kubelet), commit, uncordon. Timed
 *   from the canary's `startedAt` to its `finishedAt` as the operator recorded them (its own
 *   calls, its soak and its look at the result included). Then the rollout is paused and vm-2's
 *   operator hold released, so the operator leaves vm-2 to the person.
 * - by hand (p13-by-hand.ts): `kubectl drain vm-2 --ignore-daemonsets --delete-emptydir-data`,
 *   `molt node upgrade vm-2 --image <1.1.0 by digest> --stage --follow` (pull, write, verify; no
 *   cordon or drain), `molt node reboot vm-2 --follow` (its cordon and drain find nothing to do),
 *   the Node polled every second until Ready on the new kubelet, `kubectl uncordon vm-2`; timed
 *   end to end on the host's clock.
 * - ratio = molt seconds / by-hand seconds (target ≤ 1.10).
 * - Throughout, a sampler (p13-sampler.ts) lists the pods and Nodes every second:
 *   pdb_violations counts the looks, in molt's window, with fewer Ready pods of an app than its
 *   budget's minAvailable (target 0; the by-hand window's count is shown beside it);
 *   evicted_ready_s is from the first eviction on the node (the API server's deletionTimestamp
 *   less the grace period) to the first look with no workload pod left on it and every app at
 *   its full count Ready elsewhere; node_notready_s from the first look with the Node NotReady to
 *   the first with it Ready again (the node controller marks it NotReady only after its 40 s
 *   grace, so this is the part of the reboot Kubernetes sees).
 *
 * One run (an upgrade takes minutes under TCG). `MOLT_BENCH_KEEP=1` keeps the lab directory.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { CoreV1Api, PolicyV1Api } from '@kubernetes/client-node';
import { labPublish } from '../src/lab/publish.ts';
import type { LabState } from '../src/lab/state.ts';
import { loadKubeConfig } from '../src/platform/kube/client.ts';
import type { MachineView } from '../src/protocol/operator-machines.ts';
import type {
  MachineProgressView,
  RolloutSummaryView,
  RolloutView,
} from '../src/protocol/operator.ts';
import { eventsOf, kubectl, molt, phaseSeconds, upgradeByHand } from './p13-by-hand.ts';
import { f1, judge, report, row } from './p13-report.ts';
import { readyPerApp, startSampler, type Sampler } from './p13-sampler.ts';
import { moltArgv, withVmLab } from './vm-lab.ts';

const repoRoot = join(import.meta.dirname, '..');
const Minutes = 60_000;
/** The node molt upgrades (the canary) and the one upgraded by hand. */
const [MoltNode, HandNode] = ['vm-1', 'vm-2'];
const Version = '1.1.0';

const kubeletAfter = async (): Promise<string> => {
  const env = await readFile(join(repoRoot, 'scripts/kube-versions.env'), 'utf8');
  const v = /^KUBERNETES=(\S+)$/m.exec(env)?.[1];
  if (v === undefined) throw new Error('KUBERNETES missing from scripts/kube-versions.env');
  return v;
};

async function api<T>(lab: LabState, path: string): Promise<T> {
  const res = await fetch(new URL(path, lab.operator.dashboard));
  if (!res.ok) throw new Error(`${path}: ${String(res.status)}`);
  return (await res.json()) as T;
}

/** What ends a wait at once (anything else thrown is retried, as an API call lost to the load). */
class Fatal extends Error {}

/** Poll (1 s) until `f` returns something, or fail with what it last said. */
async function until<T>(what: string, timeoutMs: number, f: () => Promise<T | string>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    const r = await f().catch((e: unknown) => {
      if (e instanceof Fatal) throw e;
      return String(e);
    });
    if (typeof r !== 'string') return r;
    last = r;
    await sleep(1_000);
  }
  throw new Error(`${what}: not within ${String(timeoutMs / 1000)} s (${last})`);
}

/** Until the sampler's latest look has every app at `full` Ready, all on `node`. */
const allOn = (sampler: Sampler, node: string, full: Record<string, number>, timeoutMs: number) =>
  until(`every pod Ready on ${node}`, timeoutMs, () => {
    const l = sampler.looks.at(-1);
    const apps = Object.keys(full);
    if (l === undefined) return Promise.resolve('no look yet');
    const ok =
      l.pods.every((p) => p.node === node) &&
      readyPerApp(l, apps).every((n, i) => n === full[apps[i] ?? '']);
    return Promise.resolve(ok ? l : JSON.stringify(readyPerApp(l, apps)));
  });

/** vm-2 held, its pods moved to vm-1; the operator seeing the hold. */
async function prepare(lab: LabState, sampler: Sampler, full: Record<string, number>) {
  await molt(lab, [
    ...['machine', 'hold', HandNode, '--for', '3h'],
    ...['--reason', 'P13: upgraded by hand once the canary is done'],
  ]);
  await kubectl(lab, ['drain', HandNode, '--ignore-daemonsets', '--delete-emptydir-data']);
  await kubectl(lab, ['uncordon', HandNode]);
  await allOn(sampler, MoltNode, full, 10 * Minutes);
  await until('the operator sees the hold', 2 * Minutes, async () => {
    const m = (await api<MachineView[]>(lab, '/v1/machines')).find((x) => x.id === HandNode);
    return m?.hold !== undefined ? m : 'not yet';
  });
}

/** The operator's rollout of `Version` to pool vms, followed until its canary's result. */
async function moltSide(
  lab: LabState,
): Promise<{ rollout: RolloutView; canary: MachineProgressView }> {
  await labPublish(
    lab.dir,
    {
      ...{ version: Version, broken: false, vm: true, molt: moltArgv },
      log: (line: string) => process.stderr.write(`  ${line}\n`),
    },
    { out: () => undefined, err: () => undefined },
  );
  // An object, not the id: `until` takes any string for "not yet".
  const { id } = await until('a rollout of 1.1.0 to pool vms', 5 * Minutes, async () => {
    const all = await api<RolloutSummaryView[]>(lab, '/v1/rollouts');
    return all.find((r) => r.target.version === Version && r.pool === 'vms') ?? 'none yet';
  });
  return until(`the canary's result`, 30 * Minutes, async () => {
    const rollout = await api<RolloutView>(lab, `/v1/rollouts/${encodeURIComponent(id)}`);
    const started = rollout.machines.filter((m) => m.phase !== 'Pending');
    const canary = started.find((m) => m.machine === MoltNode);
    if (started.some((m) => m.machine !== MoltNode))
      throw new Fatal(`the rollout started ${HandNode} despite its hold`);
    if (canary?.phase === 'Succeeded' && canary.finishedAt !== undefined)
      return { rollout, canary };
    if (canary !== undefined && canary.phase !== 'InFlight')
      throw new Fatal(`the canary ${canary.phase}: ${canary.reason ?? ''}`);
    return canary?.phase ?? 'Pending';
  });
}

/** The canary's phases from its agent's journal (none when the operator named no operation). */
async function canaryPhases(
  lab: LabState,
  canary: MachineProgressView,
): Promise<[string, number][]> {
  if (canary.operationId === undefined) return [];
  const args = ['node', 'events', MoltNode, '--operation', canary.operationId, '-o', 'json'];
  return phaseSeconds(eventsOf(await molt(lab, args).catch(() => '')));
}

/** Both sides on a running lab, then the report. */
async function measure(lab: LabState): Promise<void> {
  if (lab.kubeconfig === undefined) throw new Error('the lab runs no Kubernetes');
  const kc = await loadKubeConfig(lab.kubeconfig);
  const budgets = (
    await kc.makeApiClient(PolicyV1Api).listNamespacedPodDisruptionBudget({ namespace: 'shop' })
  ).items;
  const minimum = Object.fromEntries(
    budgets.map((b) => [
      b.spec?.selector?.matchLabels?.['app'] ?? '',
      Number(b.spec?.minAvailable),
    ]),
  );
  const full = { web: 6, db: 3 };
  const kubelet = await kubeletAfter();
  const sampler = startSampler(kc.makeApiClient(CoreV1Api), 'shop');
  try {
    await prepare(lab, sampler, full);
    const { rollout, canary } = await moltSide(lab);
    await molt(lab, ['rollout', 'pause', rollout.id]);
    await molt(lab, ['machine', 'release', HandNode]);
    const mStart = Date.parse(canary.startedAt ?? '');
    const mEnd = Date.parse(canary.finishedAt ?? '');
    const phases = await canaryPhases(lab, canary);
    process.stdout.write(
      row(`molt: canary ${MoltNode} (the by-hand side next)`, `${f1((mEnd - mStart) / 1000)} s`),
    );
    await allOn(sampler, HandNode, full, 5 * Minutes);
    const image = `${lab.registry}/${lab.repository}@${rollout.target.digest}`;
    const hand = await upgradeByHand(lab, { node: HandNode, image, kubelet });
    // The by-hand drain's last replacements may still be starting: its window waits for them.
    await allOn(sampler, MoltNode, full, 2 * Minutes).catch(() => undefined);
    await sampler.stop();
    const after = sampler.looks.at(-1);
    for (const node of [MoltNode, HandNode])
      if (after?.nodes[node]?.kubelet !== kubelet || !after.nodes[node].ready)
        throw new Error(
          `${node} did not end Ready on ${kubelet}: ${JSON.stringify(after?.nodes[node])}`,
        );
    report(
      {
        side: judge(sampler.window(mStart, hand.start), MoltNode, (mEnd - mStart) / 1000, {
          minimum,
          full,
        }),
        phases,
      },
      {
        side: judge(sampler.window(hand.start), HandNode, hand.seconds, { minimum, full }),
        run: hand,
      },
      { minimum, version: Version, moltNode: MoltNode, handNode: HandNode },
    );
  } finally {
    await sampler.stop();
  }
}

/** Run P13 and print its table and `BENCH P13 …` line. */
export async function runP13(): Promise<void> {
  await withVmLab('p13', { network: 'loopback' }, async (lab, up) => {
    process.stdout.write(row('lab up (2 VM nodes)', `${f1(up)} s`));
    await measure(lab);
  });
}
