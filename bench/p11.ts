// SPDX-License-Identifier: Apache-2.0
/**
 * P11: the Kubernetes minor upgrade (v1.35 → v1.36) of the three-machine hosted control
 * plane, run by the real operator as a recorded plan — pre-pull everywhere, then one machine at a
 * time kube-apiserver → kube-controller-manager → kube-scheduler, the etcd leader last after
 * handing its leadership over — while a client creates a ConfigMap every 100 ms through the
 * balancer (a write may be retried for up to 5 s; one that still fails counts). Target: 0 failed
 * writes. Same run as test/integration/kube/kubernetes-upgrade.test.ts's upgrade.
 */
import { eventually } from '../src/platform/process/managed-process.ts';
import {
  current,
  startUpgradeRig,
  upgradeUnderWrites,
} from '../test/integration/kube/kube-upgrade-rig.ts';

const seconds = (from?: string, to?: string): number =>
  from === undefined || to === undefined ? 0 : (Date.parse(to) - Date.parse(from)) / 1000;

export async function runP11(): Promise<void> {
  const rig = await startUpgradeRig();
  try {
    const r = await upgradeUnderWrites(rig, current);
    if (r.run.code !== 0) throw new Error(`the upgrade failed: ${r.run.stderr}`);
    // The plan as the operator keeps it once its end is recorded (the follow may end a poll early).
    const plan = await eventually(
      async () => {
        const p = (await rig.status()).plan;
        if (p?.target.version !== current || p.endedAt === undefined)
          throw new Error(
            `plan ${p?.id ?? '-'} (${p?.kind ?? '-'} to ${p?.target.version ?? '-'}) is ${p?.phase ?? 'absent'}`,
          );
        return p;
      },
      { timeoutMs: 120_000, intervalMs: 1_000 },
    );
    if (plan.phase !== 'Succeeded') throw new Error(`the plan ended ${plan.phase}`);
    const row = (k: string, v: string): string => `${k.padEnd(44)}${v}\n`;
    const steps = plan.steps.map((s) =>
      row(`  ${s.id}`, `${seconds(s.startedAt, s.finishedAt).toFixed(1)} s`),
    );
    process.stdout.write(
      [
        `P11 — Kubernetes ${plan.from.version} → ${plan.target.version} of 3 hosted control-plane machines\n`,
        row('upgrade (asked → plan Succeeded)', `${r.seconds.toFixed(1)} s`),
        row('plan (first step → last)', `${seconds(plan.createdAt, plan.endedAt).toFixed(1)} s`),
        ...steps,
        row('writes through the balancer', String(r.writes)),
        row('failed (after 15 s of retries)', String(r.failed)),
        row('attempts retried (reconnects)', String(r.retries)),
        row('slowest write', `${String(r.slowestMs)} ms`),
        row('polls in a row without an etcd quorum', String(r.longestBadRun)),
      ].join(''),
    );
    process.stdout.write(
      `BENCH P11 failed_writes=${String(r.failed)} writes=${String(r.writes)} upgrade_s=${r.seconds.toFixed(1)}\n`,
    );
  } finally {
    await rig.stop();
  }
}
