// SPDX-License-Identifier: Apache-2.0
/**
 * The lab's VMs as real Kubernetes nodes (docs/adr/0015): with Kubernetes and `--vms N`, the
 * lab's OS releases carry a node runtime (1.0.0 the previous minor's kubelet, later releases the
 * current one, so an upgrade moves the kubelet), the lab's own sandbox and workload images are
 * pushed to its registry, and each VM joins with a bootstrap token. The lab, as the cluster's
 * admin, then labels each VM's Node with its pool: a label its kubelet cannot set.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { nodeBinaries } from '../platform/kube/binaries.ts';
import { eventually } from '../platform/process/managed-process.ts';
import { PoolLabel } from '../protocol/kube-resources.ts';
import { pushContainerImages } from './services/container-images.ts';
import type { LabKube, NodeCluster } from './lab-kube.ts';
import type { VmKubernetes } from './vm/vm-machines.ts';

const run = promisify(execFile);

/** The kubelet of the lab's first release: `previous` (kube-versions.env), then the current. */
export function kubeletFor(version: string): 'previous' | undefined {
  return version === '1.0.0' ? 'previous' : undefined;
}

/**
 * The node runtime directory for release `version` of a lab with VM nodes. A cluster on VMs
 * (`onVms`) keeps its control plane's minor, the previous one, in every release: a kubelet must
 * never run ahead of its API server, and that cluster's version moves as configuration.
 */
export function nodeRuntimeFor(
  version: string,
  log: (line: string) => void,
  onVms = false,
): Promise<string> {
  return nodeBinaries(
    (line) => {
      log(`VMs: ${line.replace(/^molt: /, '')}`);
    },
    onVms ? 'previous' : kubeletFor(version),
  );
}

export interface VmNodes {
  readonly kubernetes: VmKubernetes;
  /** The lab's workload image (busybox), by digest. */
  readonly workloadImage: string;
}

/** Push the lab's container images and make the VMs' bootstrap token. */
export async function prepareVmNodes(
  kube: NodeCluster,
  registry: string,
  log: (line: string) => void,
): Promise<VmNodes> {
  const images = await pushContainerImages({ registry, insecure: true });
  log(
    `Kubernetes: sandbox ${images.pause.byTag} and workload ${images.busybox.byTag} in the registry`,
  );
  const bootstrapToken = await kube.bootstrapToken();
  return {
    kubernetes: {
      server: kube.server,
      caPem: kube.ca,
      bootstrapToken,
      agentUser: (name) => kube.agentUser(name),
      sandboxImage: images.pause.byTag,
    },
    workloadImage: images.busybox.byDigest,
  };
}

/** Wait until every VM's Node is Ready, then label it with its pool. */
export async function joinVmNodes(
  kube: Pick<LabKube, 'bins' | 'admin'>,
  names: readonly string[],
  pool: string,
  log: (line: string) => void,
): Promise<void> {
  const kubectl = (args: readonly string[]) =>
    run(join(kube.bins, 'kubectl'), ['--kubeconfig', kube.admin.kubeconfig, ...args]);
  for (const name of names) {
    const t = performance.now();
    await eventually(
      async () => {
        const { stdout } = await kubectl([
          ...['get', 'node', name, '-o'],
          'jsonpath={.status.conditions[?(@.type=="Ready")].status} {.status.nodeInfo.kubeletVersion}',
        ]);
        if (!stdout.startsWith('True ')) throw new Error(`Node ${name}: ${stdout || 'not yet'}`);
        log(
          `Kubernetes: Node ${name} Ready, kubelet ${stdout.split(' ')[1] ?? '?'} (${String(Math.round((performance.now() - t) / 1000))} s)`,
        );
      },
      { timeoutMs: 6 * 60_000, intervalMs: 2_000 },
    );
    await kubectl(['label', 'node', name, '--overwrite', `${PoolLabel}=${pool}`]);
  }
}
