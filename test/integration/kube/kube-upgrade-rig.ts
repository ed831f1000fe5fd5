// SPDX-License-Identifier: Apache-2.0
// The Kubernetes version as configuration, end to end (docs/adr/0012): the hosted
// cluster (three lab control-plane machines running etcd, kube-apiserver, kube-controller-manager
// and kube-scheduler from their agents) starts on KUBERNETES_PREVIOUS; both versions' binaries are
// published as Kubernetes bundles by `molt dev publish-kubernetes`; the cluster's Kubernetes is a
// molt.dev `KubernetesCluster` object (`default`, in molt-system) that `kubectl` edits; the real
// `molt operator` process reads it each pass and runs the cluster's plans, its health gates reading
// the cluster through the balancer; and `molt cluster kubernetes …` asks it for upgrades too.
// The upgrade test and the P11 benchmark share it.
import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { stringify } from 'yaml';
import { CoreV1Api } from '@kubernetes/client-node';
import { kubeBinaries } from '../../../src/platform/kube/binaries.ts';
import { loadKubeConfig } from '../../../src/platform/kube/client.ts';
import {
  startProcess,
  type ManagedProcess,
} from '../../../src/platform/process/managed-process.ts';
import { KubeClusterStatusView } from '../../../src/protocol/operator-kubernetes.ts';
import type { KubernetesClusterSpecInput } from '../../../src/protocol/kube-cluster.ts';
import { MoltGroup, MoltVersion } from '../../../src/protocol/kube-resources.ts';
import { writeOperatorFiles } from '../../../src/lab/fleet/operator-files.ts';
import { issueOperatorApiCert } from '../../../src/lab/fleet/operator-pki.ts';
import { OperatorServingPrefix } from '../../../src/protocol/operator.ts';
import { moltArgv } from '../../../src/testkit/molt-entry.ts';
import {
  startHostedCluster,
  startKubeWriter,
  watchQuorum,
  type HostedCluster,
} from './hosted-cluster.ts';

const run = promisify(execFile);
export const previous = 'v1.35.4';
export const current = 'v1.36.3';
/** An earlier patch of `current`: the patch downgrade's target (KUBERNETES_EARLIER_PATCH, test/kube-versions). */
export const earlierPatch = 'v1.36.1';
/** The operator's release repository is `molt/installer`: bundles go to its `-kubernetes` twin. */
export const bundleRepository = 'molt/installer-kubernetes';

export interface MoltRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

export interface UpgradeRig {
  readonly c: HostedCluster;
  readonly operator: ManagedProcess;
  /** The operator API's URL. */
  readonly api: string;
  /** `molt cluster kubernetes …` (or any molt command) against the operator, as the operator identity. */
  cluster(args: readonly string[]): Promise<MoltRun>;
  /** `molt dev publish-kubernetes` of a directory's control-plane binaries; resolves with the bundle. */
  publish(version: string, from: string, repository?: string): Promise<string>;
  /** The operator's status of the cluster (`molt cluster kubernetes status -o json`). */
  status(): Promise<KubeClusterStatusView>;
  stop(): Promise<void>;
}

async function runMolt(
  args: readonly string[],
  env: Record<string, string> = {},
): Promise<MoltRun> {
  const [node = process.execPath, ...entry] = moltArgv;
  const child = spawn(node, [...entry, ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (b: Buffer) => (stdout += b.toString('utf8')));
  child.stderr.on('data', (b: Buffer) => (stderr += b.toString('utf8')));
  const [code] = (await once(child, 'close')) as [number | null];
  return { code: code ?? -1, stdout, stderr };
}

/** A directory with only the three control-plane binaries of `version` (kubectl left out: time). */
export async function controlPlaneBins(dir: string, version: string): Promise<string> {
  const bins = await kubeBinaries(undefined, version);
  const out = join(dir, `bins-${version}`);
  await mkdir(out, { recursive: true });
  for (const n of ['kube-apiserver', 'kube-controller-manager', 'kube-scheduler'])
    await symlink(join(bins, n), join(out, n)).catch(() => undefined);
  return out;
}

/** kubectl as the cluster's admin; rejects with its stderr. */
export async function kubectl(c: HostedCluster, ...args: string[]): Promise<string> {
  const r = await run(join(c.kube.bins, 'kubectl'), [
    '--kubeconfig',
    c.kube.admin.kubeconfig,
    ...args,
  ]);
  return r.stdout;
}

/** `kubectl apply` of the `default` KubernetesCluster with `spec` (a person editing the config). */
export async function applyCluster(
  c: HostedCluster,
  spec: KubernetesClusterSpecInput,
): Promise<void> {
  const file = join(c.kube.dir, `cluster-${String(Date.now())}.yaml`);
  await writeFile(
    file,
    stringify({
      apiVersion: `${MoltGroup}/${MoltVersion}`,
      kind: 'KubernetesCluster',
      metadata: { name: 'default', namespace: 'molt-system' },
      spec,
    }),
  );
  await kubectl(c, 'apply', '-f', file);
}

/**
 * The rig: the hosted cluster on `from` (its KubernetesCluster object says so too), a bundle of
 * each of `bundles` published, the operator serving.
 */
export async function startUpgradeRig(
  o: { readonly from?: string; readonly bundles?: readonly string[] } = {},
): Promise<UpgradeRig> {
  const from = o.from ?? previous;
  const c = await startHostedCluster({ version: from });
  let operator: ManagedProcess | undefined;
  const stop = async (): Promise<void> => {
    await operator?.stop(10_000);
    await c.stop();
  };
  try {
    const dir = join(c.kube.dir, '..', 'rig');
    await mkdir(dir, { recursive: true });
    const pki = c.pki.dir;
    const publish = async (version: string, from: string, repository = bundleRepository) => {
      const r = await runMolt([
        ...['dev', 'publish-kubernetes', '--version', version, '--from', from],
        ...['--registry', c.registry, '--repository', repository, '--insecure', '-o', 'json'],
      ]);
      if (r.code !== 0) throw new Error(`publish-kubernetes ${version}: ${r.stderr}`);
      return (JSON.parse(r.stdout) as { bundle: string }).bundle;
    };
    for (const v of o.bundles ?? [previous, current])
      await publish(v, await controlPlaneBins(dir, v));
    await kubectl(c, 'create', 'namespace', 'molt-system');
    await applyCluster(c, { version: from });
    const config = await writeOperatorFiles(
      {
        dir,
        registry: { host: c.registry },
        pki: c.pki,
        storeEndpoints: [],
        machines: c.machines.machines.map((m) => ({
          id: m.name,
          endpoint: m.apiUrl,
          role: 'control-plane' as const,
          pool: 'control-plane',
          labels: {},
        })),
      },
      {
        pools: [{ name: 'control-plane', policies: [] }],
        config: {
          pki: await issueOperatorApiCert(pki),
          store: 'memory',
          id: 'operator-1',
          listen: { host: '127.0.0.1', port: 0 },
          kubernetes: {
            kubeconfig: c.kube.admin.kubeconfig,
            leaderElection: false,
            status: false,
          },
        },
      },
    );
    const [node = process.execPath, ...entry] = moltArgv;
    operator = startProcess('molt operator', node, [...entry, 'operator', '--config', config], {
      logFile: join(dir, 'operator.log'),
    });
    const api =
      (await operator.waitFor(new RegExp(`${OperatorServingPrefix}(\\S+)`), 60_000))[1] ?? '';
    const cluster = (args: readonly string[]) =>
      runMolt(['cluster', ...args, '--endpoint', api], c.pki.operatorEnv);
    return {
      c,
      operator,
      api,
      cluster,
      publish,
      status: async () => {
        const r = await cluster(['kubernetes', 'status', '-o', 'json']);
        if (r.code !== 0) throw new Error(`molt cluster kubernetes status: ${r.stderr}`);
        return KubeClusterStatusView.parse(JSON.parse(r.stdout));
      },
      stop,
    };
  } catch (e) {
    await stop();
    throw e;
  }
}

export interface UpgradeUnderWrites {
  readonly writes: number;
  readonly failed: number;
  readonly retries: number;
  readonly slowestMs: number;
  readonly lastError: string | undefined;
  /** The most polls in a row at which fewer than two members knew a leader (see watchQuorum). */
  readonly longestBadRun: number;
  readonly worstPoll: string;
  readonly seconds: number;
  /** `molt cluster kubernetes upgrade --to … --follow`. */
  readonly run: MoltRun;
}

/** Ask for `to` and follow the plan to its end while a client writes and a monitor watches etcd. */
export async function upgradeUnderWrites(rig: UpgradeRig, to: string): Promise<UpgradeUnderWrites> {
  return underWrites(rig, () => rig.cluster(['kubernetes', 'upgrade', '--to', to, '--follow']));
}

/** Run `change` (which ends when the plan has) while a client writes and a monitor watches etcd. */
export async function underWrites(
  rig: UpgradeRig,
  change: () => Promise<MoltRun>,
): Promise<UpgradeUnderWrites> {
  const admin = await loadKubeConfig(rig.c.kube.admin.kubeconfig);
  const ns = `p11-${String(Date.now())}`;
  await admin.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name: ns } } });
  const started = performance.now();
  const writer = startKubeWriter(admin, ns);
  const quorum = watchQuorum(rig.c.machines.endpoints);
  const run = await change();
  const q = await quorum.stop();
  const w = await writer.stop();
  return {
    ...w,
    longestBadRun: q.longestBadRun,
    worstPoll: q.worst,
    seconds: (performance.now() - started) / 1000,
    run,
  };
}
