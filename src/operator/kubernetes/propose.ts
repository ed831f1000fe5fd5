// SPDX-License-Identifier: Apache-2.0
/**
 * A proposed Kubernetes plan (docs/adr/0012 §4, §7): everything the checks need, gathered — what
 * each control-plane machine runs and boots, etcd, the bundle of the target resolved to a digest,
 * the API server's metrics — then core's checks and core's steps. Nothing is written: the caller
 * records the plan (the loop, the API) or prints it (a dry run). A refusal carries its stable code.
 */
import { ErrorCode, MoltError } from '../../core/errors.ts';
import { runChecks, type MachineRelease } from '../../core/kubernetes/checks.ts';
import { planSteps } from '../../core/kubernetes/plan.ts';
import type { KubePlanKind, KubeTarget, KubeUpgrade } from '../../core/kubernetes/types.ts';
import type { KubernetesClusterSpec } from '../../protocol/kube-cluster.ts';
import type { MachineRecord } from '../ports/store.ts';
import type { KubePlanDeps } from './deps.ts';
import { clusterInventory, type ClusterInventory } from './inventory.ts';
import { componentArgs } from './spec.ts';

export interface ProposeRequest {
  readonly cluster: string;
  readonly kind: KubePlanKind;
  readonly spec: KubernetesClusterSpec;
  readonly by: string;
}

async function releasesOf(
  d: KubePlanDeps,
  records: readonly MachineRecord[],
): Promise<MachineRelease[]> {
  const releases = await d.releases();
  return Promise.all(
    records.map(async (m) => {
      const digest = await d.booted(m);
      const r = releases.find((x) => x.digest === digest);
      return {
        machine: m.id,
        ...(r !== undefined && { version: r.version }),
        ...(r?.kubernetes !== undefined && { kubernetes: r.kubernetes }),
      };
    }),
  );
}

/** The bundles of the versions running now, for components that do not report theirs. */
async function runningBundles(
  d: KubePlanDeps,
  inv: ClusterInventory,
  repository: string,
): Promise<Map<string, string>> {
  const versions = new Set(
    inv.machines.flatMap((m) =>
      m.components
        .filter((c) => c.bundle === undefined && c.version !== undefined)
        .map((c) => c.version ?? ''),
    ),
  );
  const found = new Map<string, string>();
  for (const v of versions) {
    const ref = await d.bundles.resolve(repository, v);
    if (ref !== undefined) found.set(v, ref);
  }
  return found;
}

/**
 * The next plan id of a cluster: `0003-upgrade-v1.36.3`, one past the highest number kept — not
 * the count, which a store that keeps only the newest plans would hand out again.
 */
async function nextId(
  d: KubePlanDeps,
  cluster: string,
  kind: KubePlanKind,
  version: string,
): Promise<string> {
  const numbers = (await d.store.kubeUpgrades(cluster)).map((p) => Number.parseInt(p.id, 10));
  const n = Math.max(0, ...numbers.filter(Number.isSafeInteger)) + 1;
  return `${String(n).padStart(4, '0')}-${kind}-${version}`;
}

/** The extra arguments the components run with now: those of the last plan that succeeded. */
async function currentArgs(d: KubePlanDeps, cluster: string): Promise<KubeTarget['extraArgs']> {
  const done = (await d.store.kubeUpgrades(cluster)).filter((p) => p.phase === 'Succeeded');
  return done.at(-1)?.target.extraArgs ?? {};
}

function refused(code: ErrorCode, message: string, hint?: string): MoltError {
  return new MoltError(code, message, { ...(hint !== undefined && { hint }) });
}

/**
 * The repository the bundles come from. The spec may name another one only if the operator's
 * own config lists it: writing a KubernetesCluster must not be a way to choose which binaries
 * the control-plane machines run (any repository of the registry, a tenant's pushes included).
 */
export function bundleRepositoryOf(d: KubePlanDeps, spec: KubernetesClusterSpec): string {
  const named = spec.bundleRepository;
  if (named === undefined || named === d.bundleRepository) return d.bundleRepository;
  if ((d.bundleRepositories ?? []).includes(named)) return named;
  throw refused(
    ErrorCode.KubeBundleRepositoryRefused,
    `bundleRepository ${named} is not a repository this operator takes Kubernetes bundles from (${[d.bundleRepository, ...(d.bundleRepositories ?? [])].join(', ')})`,
    'leave bundleRepository out, or list the repository in the operator config’s bundleRepositories',
  );
}

/**
 * The plan `request` asks for, not yet recorded; throws the first refusal (`MOLT_KUBE_*`) — with
 * the checks as its details — before anything moved.
 */
export async function proposePlan(d: KubePlanDeps, request: ProposeRequest): Promise<KubeUpgrade> {
  const { cluster, spec } = request;
  const inv = await clusterInventory(d, cluster);
  const repository = bundleRepositoryOf(d, spec);
  const bundle = await d.bundles.resolve(repository, spec.version);
  const extraArgs = componentArgs(spec);
  const result = runChecks({
    machines: inv.machines,
    target: { version: spec.version, extraArgs },
    bundle,
    bundleName: `${repository}:${spec.version}`,
    releases: await releasesOf(d, inv.records),
    metrics: await d.health.metrics(cluster),
    etcd: inv.etcd,
  });
  if (result.refusal !== undefined || !result.path.ok || bundle === undefined) {
    const r = result.refusal ?? { code: ErrorCode.KubeBundleNotFound, message: 'no bundle' };
    const e = refused(r.code, r.message, r.hint);
    throw new MoltError(e.code, e.message, {
      ...(r.hint !== undefined && { hint: r.hint }),
      details: { checks: result.checks },
    });
  }
  const emulated = request.kind === 'finalize' ? undefined : result.path.emulatedVersion;
  const target: KubeTarget = {
    version: spec.version,
    bundle,
    extraArgs,
    finalize: spec.finalize,
    ...(emulated !== undefined && { emulatedVersion: emulated }),
  };
  const known = await runningBundles(d, inv, repository);
  const steps = planSteps({
    machines: inv.machines,
    ...(inv.leader !== undefined && { etcdLeader: inv.leader }),
    target,
    currentArgs: await currentArgs(d, cluster),
    bundleOf: (v) => known.get(v),
  });
  if (!steps.ok)
    throw refused(
      steps.code,
      steps.reason,
      `publish the bundle of the version the cluster runs to ${repository}`,
    );
  return {
    id: await nextId(d, cluster, request.kind, spec.version),
    cluster,
    kind: request.kind,
    from: result.path.from,
    target,
    phase: 'Running',
    createdAt: d.now(),
    by: request.by,
    checks: result.checks,
    steps: steps.steps,
    rollback: [],
  };
}
