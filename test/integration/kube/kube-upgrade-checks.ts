// SPDX-License-Identifier: Apache-2.0
// What the Kubernetes upgrade tests read of the rig (kube-upgrade-rig.ts): the components each
// machine runs, the version the balancer serves, the operator's recorded plans.
import assert from 'node:assert/strict';
import { Agent, fetch } from 'undici';
import { eventually } from '../../../src/platform/process/managed-process.ts';
import type { KubePlanView, KubeStepView } from '../../../src/protocol/operator-kubernetes.ts';
import { kubectl, type UpgradeRig } from './kube-upgrade-rig.ts';

/** What each machine's components run, from `molt cluster kubernetes status -o json`. */
async function running(rig: UpgradeRig): Promise<string[]> {
  const status = await rig.status();
  return status.machines.flatMap((m) =>
    m.components.map(
      (c) =>
        `${m.machine} ${c.name} ${c.version ?? '?'}${c.emulatedVersion === undefined ? '' : ` (emulating ${c.emulatedVersion})`}${c.healthy ? '' : ' UNHEALTHY'}`,
    ),
  );
}

/** Every component of every machine on `version` (emulating `emulated`), healthy. */
export async function assertAllOn(
  rig: UpgradeRig,
  version: string,
  emulated?: string,
): Promise<void> {
  const lines = await running(rig);
  assert.equal(lines.length, 9, lines.join('\n'));
  const suffix = emulated === undefined ? '' : ` (emulating ${emulated})`;
  for (const line of lines)
    assert.match(
      line,
      new RegExp(` ${version.replace(/\./g, '\\.')}${suffix.replace(/[()]/g, '\\$&')}$`),
      lines.join('\n'),
    );
}

/** What the API server behind the balancer says it is (public `/version`). */
export async function servedVersion(rig: UpgradeRig): Promise<string> {
  const dispatcher = new Agent({ connect: { ca: rig.c.kube.ca } });
  try {
    const res = await fetch(`https://${rig.c.balancer.address}/version`, { dispatcher });
    return ((await res.json()) as { gitVersion: string }).gitVersion;
  } finally {
    await dispatcher.close();
  }
}

export const applies = (steps: readonly KubeStepView[]): KubeStepView[] =>
  steps.filter((s) => s.action === 'apply');

/** The ids of the plans the operator has recorded so far. */
export const planIds = async (rig: UpgradeRig): Promise<Set<string>> =>
  new Set((await rig.status()).plans.map((p) => p.id));

/** The plan to `version` not among `known`, once it has ended. */
export async function ended(
  rig: UpgradeRig,
  version: string,
  known: ReadonlySet<string> = new Set(),
  timeoutMs = 300_000,
): Promise<KubePlanView> {
  return eventually(
    async () => {
      const { plan } = await rig.status();
      assert.ok(
        plan !== undefined && plan.target.version === version && !known.has(plan.id),
        `a new plan to ${version}`,
      );
      assert.ok(plan.endedAt !== undefined, `plan ${plan.id} still ${plan.phase}`);
      return plan;
    },
    { timeoutMs, intervalMs: 2_000 },
  );
}

/** `kubectl get kubernetesclusters` (the printer columns), once its Plan column shows `phase`. */
export async function objectShows(rig: UpgradeRig, phase: string): Promise<string> {
  return eventually(
    async () => {
      const table = await kubectl(rig.c, 'get', 'kubernetesclusters', '-n', 'molt-system');
      assert.match(table, new RegExp(`^default\\s.*\\s${phase}\\s`, 'm'), table);
      return table;
    },
    { timeoutMs: 60_000, intervalMs: 1_000 },
  );
}
