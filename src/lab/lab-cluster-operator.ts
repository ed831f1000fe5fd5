// SPDX-License-Identifier: Apache-2.0
/**
 * Where the lab's operator runs (`molt lab up --operator host|cluster`): a process on the host
 * (lab-operator.ts), or pods in the lab's own cluster, on its VM nodes (cluster-operator.ts) —
 * the operator upgrading the machines it runs on. For `cluster` the host routes each VM's pod
 * subnet through the VM, and a relay (services/pod-relay.ts) gives `molt lab env` and the
 * dashboard an address that outlives any one pod.
 */
import { join } from 'node:path';
import { ErrorCode, MoltError } from '../core/errors.ts';
import type { OperatorConfigInput } from '../protocol/operator-config.ts';
import {
  installClusterOperator,
  OperatorName,
  OperatorNamespace,
  OperatorPorts,
} from './cluster-operator.ts';
import type { LabFleet } from './fleet/fleet.ts';
import type { LabNetwork, NetworkMode } from './fleet/network.ts';
import { startPodRelay } from './services/pod-relay.ts';
import type { LabKube } from './lab-kube.ts';
import { podRoutes } from './vm/vm-node.ts';
import { VmPool, type VmMachines } from './vm/vm-machines.ts';
import { PoolLabel } from '../protocol/kube-resources.ts';

export type OperatorPlace = 'host' | 'cluster';

/** The `--operator` flag, checked against the rest of the lab: MOLT_BAD_FLAG saying what is missing. */
/**
 * What a lab lacks to run pods on VMs on its bridge (`vms`: how to say VMs are missing), or
 * nothing.
 */
export function missingForVmPods(
  lab: { readonly kubernetes: boolean; readonly vms: number; readonly network: string },
  vms: string,
): string | undefined {
  if (!lab.kubernetes) return 'a cluster (drop --no-kubernetes)';
  if (lab.vms === 0) return vms;
  if (lab.network !== 'netns') return 'the lab bridge (--network netns, as root)';
  return undefined;
}

export function operatorPlace(
  value: string,
  lab: { readonly kubernetes: boolean; readonly vms: number; readonly network: NetworkMode },
): OperatorPlace {
  if (value !== 'host' && value !== 'cluster')
    throw new MoltError(ErrorCode.BadFlag, `--operator must be host or cluster, not ${value}`);
  if (value === 'host') return value;
  const missing = missingForVmPods(lab, 'nodes that run pods: --vms N');
  if (missing !== undefined)
    throw new MoltError(ErrorCode.BadFlag, `--operator cluster needs ${missing}`, {
      hint: 'e.g. molt lab up --vms 2 --workers 0 --operator cluster',
    });
  return value;
}

export interface ClusterOperatorParts {
  readonly dir: string;
  readonly molt: readonly string[];
  readonly network: LabNetwork;
  readonly kube: LabKube;
  readonly fleet: LabFleet;
  readonly vms: VmMachines;
  /** The host operator's config the lab wrote: its PKI, periods and dashboard users. */
  readonly settings: Partial<OperatorConfigInput>;
  readonly log: (line: string) => void;
  readonly signal?: AbortSignal | undefined;
}

/**
 * Install the operator in the cluster and relay to it; resolves with the addresses the lab's CLI
 * context and dashboard use, and how to stop the relay (the pods go with the cluster).
 */
export async function startClusterOperator(
  p: ClusterOperatorParts,
): Promise<{ api: string; dashboard: string; stop: () => Promise<void> }> {
  // Not the host operator's id (each replica is its pod), listeners or kubeconfig (a file here).
  const { pki, dashboard } = p.settings;
  if (pki?.serverCert === undefined || pki.serverKey === undefined)
    throw new MoltError(ErrorCode.Internal, 'the lab operator has no server certificate');
  for (const route of podRoutes(p.vms.addresses, 0)) await p.network.route(route.to, route.via);
  const apiPort = new URL(p.kube.server).port;
  await installClusterOperator({
    dir: join(p.dir, 'operator'),
    molt: p.molt,
    kubectl: join(p.kube.bins, 'kubectl'),
    kubeconfig: p.kube.admin.kubeconfig,
    registry: p.fleet.registry.host,
    apiServer: `https://${p.network.hostAddress}:${apiPort}`,
    pki: { ...pki, serverCert: pki.serverCert, serverKey: pki.serverKey },
    machines: [...p.fleet.machines, ...p.vms.onBridge],
    nodeSelector: { [PoolLabel]: VmPool },
    // Under emulation (TCG) a VM node's agent, kubelet and containerd keep its one CPU busy, and
    // a 100m request's weight left the operator a fifth of it: minutes to load molt, probes
    // timing out. A larger share lets it start; two replicas on one VM still fit.
    cpuRequest: '400m',
    // And loading molt there took over the manifest's 5 min while the lab's other VM pulled and
    // started its own replica: the kubelet killed it half-loaded and it started over. As long as
    // the lab waits for a leader.
    startupSeconds: 15 * 60,
    config: {
      // A pass every 5 s, not every second as on the host: on a VM node's one emulated CPU the
      // host lab's pace kept the operator too busy to answer its probes.
      interval: '5s',
      discoverEvery: '10s',
      // Plain HTTP as on the host: `molt lab status` and the demo read it through the relay.
      ...(dashboard !== undefined && { dashboard: { ...dashboard, tls: false } }),
    },
    log: p.log,
    signal: p.signal,
  });
  const relay = await startPodRelay(
    { namespace: OperatorNamespace, name: OperatorName, kubeconfig: p.kube.admin.kubeconfig },
    [OperatorPorts.api, OperatorPorts.dashboard],
  );
  const at = (port: number): string => `https://${relay.addresses.get(port) ?? ''}`;
  return {
    api: at(OperatorPorts.api),
    dashboard: `http://${relay.addresses.get(OperatorPorts.dashboard) ?? ''}`,
    stop: () => relay.close(),
  };
}
