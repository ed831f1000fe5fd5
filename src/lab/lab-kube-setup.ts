// SPDX-License-Identifier: Apache-2.0
/**
 * The lab's Kubernetes on the host (docs/adr/0006, 0015): its control plane for the lab machines
 * and VMs as nodes, the lab's workloads under PodDisruptionBudgets on whichever cluster the lab
 * has, and its pools as molt.dev Pools.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { loadKubeConfig } from '../platform/kube/client.ts';
import { packageFile } from '../platform/package-files.ts';
import { PoolLabel } from '../protocol/kube-resources.ts';
import type { LabNetwork } from './fleet/network.ts';
import { workloads } from './fleet/workloads.ts';
import type { LabKube } from './lab-kube.ts';
import type { VmNodes } from './lab-nodes.ts';
import { startKubeControlPlane, type KubeControlPlane } from './services/kube-control-plane.ts';
import { kubectlSettled } from './kubectl-settled.ts';
import { VmPool, workerVmNames } from './vm/vm-machines.ts';

const run = promisify(execFile);

/** Every node with a kubelet and an agent identity: the lab machines', and the VMs' agents. */
const nodeNames = (workers: number, vms: number): string[] => [
  'cp-1',
  'cp-2',
  'cp-3',
  ...Array.from({ length: workers }, (_, i) => `w-${String(i + 1)}`),
  ...workerVmNames(vms),
];

export async function startKube(
  o: { readonly workers: number; readonly vms: number; readonly dir: string },
  network: LabNetwork,
  log: (line: string) => void,
): Promise<KubeControlPlane> {
  log(
    'Kubernetes: control plane (the first run builds its binaries from the Go module proxy: about 17 min on 2 cores)',
  );
  const kube = await startKubeControlPlane({
    nodes: nodeNames(o.workers, o.vms),
    // VM nodes under TCG pause for seconds while a neighbour boots; 40 s is Kubernetes' own default.
    ...(o.vms > 0 && { nodeMonitorGraceSeconds: 40 }),
    address: network.hostAddress,
    dir: join(o.dir, 'kube'),
    onProgress: (line) => {
      log(`Kubernetes: ${line.replace(/^molt: /, '')}`);
    },
  });
  const deploy = packageFile('deploy', 'kubernetes');
  for (const manifest of ['rbac.yaml', 'operator-rbac.yaml'])
    await run(join(kube.bins, 'kubectl'), [
      '--kubeconfig',
      kube.admin.kubeconfig,
      'apply',
      '-f',
      join(deploy, manifest),
    ]);
  log(`Kubernetes: API at ${kube.server}`);
  return kube;
}

/**
 * The lab's workloads. With VM nodes they run the lab's busybox image (a web server, its default
 * command), which a real node pulls and runs, and the lab's kubelet stand-ins mark Running.
 */
export async function startWorkloads(
  kube: Pick<LabKube, 'admin'>,
  nodes: VmNodes | undefined,
  log: (line: string) => void,
  onVmsOnly: boolean,
): Promise<void> {
  // Without lab workers the VMs are the workers: the lab's control-plane machines stay free of them.
  const image =
    nodes === undefined
      ? undefined
      : {
          image: nodes.workloadImage,
          ...(onVmsOnly && { nodeSelector: { [PoolLabel]: VmPool } }),
        };
  const w = workloads(await loadKubeConfig(kube.admin.kubeconfig), image);
  const ns = await w.namespace('shop');
  await w.deployment(ns, 'web', 6);
  await w.statefulSet(ns, 'db', 3);
  await w.running(ns, 9, nodes === undefined ? undefined : 10 * 60_000);
  await w.pdb(ns, 'web', 'web', 5);
  await w.pdb(ns, 'db', 'db', 2);
  log(
    'Kubernetes: workloads shop/web (6 pods, PDB minAvailable 5) and shop/db (StatefulSet, 3, PDB minAvailable 2)',
  );
}

/** The lab's pools as molt.dev Pools (docs/adr/0011): people change them with kubectl. */
export async function applyPools(
  kube: LabKube | undefined,
  pools: string | undefined,
  log: (line: string) => void,
): Promise<void> {
  if (kube === undefined || pools === undefined) return;
  await kubectlSettled(join(kube.bins, 'kubectl'), kube.admin.kubeconfig, ['apply', '-f', pools]);
  log('Kubernetes: the lab’s pools applied as molt.dev Pools (molt lab kubectl get pools -A)');
}
