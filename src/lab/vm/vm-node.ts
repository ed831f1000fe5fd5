// SPDX-License-Identifier: Apache-2.0
/**
 * What makes a lab VM a real Kubernetes node (docs/adr/0015): the files `molt install` takes —
 * the cluster's CA, a bootstrap token, the agent's own kubeconfig — and the machine config's
 * `kubernetes` section, with every host address as the VM reaches it (QEMU user networking).
 */
import { join } from 'node:path';
import { stringify } from 'yaml';
import { writePrivateFile } from '../../platform/fs/private-file.ts';
import type { MachineConfigInput } from '../../protocol/machine-config.ts';

/** The cluster the VMs join, as the host sees it. */
export interface VmKubernetes {
  /** `https://127.0.0.1:PORT` (a VM reaches it at 10.0.2.2) or another host address. */
  readonly server: string;
  /** The cluster CA (PEM). */
  readonly caPem: string;
  /** A bootstrap token `<id>.<secret>` (kube-system Secret `bootstrap-token-<id>`). */
  readonly bootstrapToken: string;
  /**
   * The kubeconfig `user` of the VM's agent identity `molt:agent:<name>`: a bearer token (the
   * host's control plane) or a client certificate of the cluster CA (a cluster on VMs).
   */
  agentUser(name: string): Readonly<Record<string, string>>;
  /** The sandbox image by its published name (pulled through the registry mirror). */
  readonly sandboxImage: string;
}

/** `host[:port]` as a VM reaches it: the host's loopback is 10.0.2.2 under user networking. */
export function guestAddress(hostPort: string): string {
  const [host, port] = hostPort.split(':');
  return host === '127.0.0.1' || host === 'localhost'
    ? `10.0.2.2${port === undefined ? '' : `:${port}`}`
    : hostPort;
}

/** The API server's URL as a VM reaches it. */
export function guestServer(server: string): string {
  const url = new URL(server);
  return `https://${guestAddress(url.host)}`;
}

/** VM `index`'s (1-based) pod subnet: each VM's pods get their own /24. */
export const podCidr = (index: number): string => `10.244.${String(index)}.0/24`;

/**
 * The routes to the other VMs' pods over the lab bridge, no overlay (docs/adr/0018): VM `i`'s
 * subnet via VM `i`'s bridge address. `addresses[i - 1]` is VM `i`'s.
 */
export function podRoutes(
  addresses: readonly string[],
  index: number,
): { to: string; via: string }[] {
  return addresses.flatMap((via, i) => (i + 1 === index ? [] : [{ to: podCidr(i + 1), via }]));
}

/**
 * The files that make VM `vm.index` (1-based) a node: the cluster CA, its bootstrap token and its
 * agent's kubeconfig, written into the VM's directory for `molt install`, and the config's
 * `kubernetes` section. On the lab bridge, the VM's address there is its Node's InternalIP.
 */
export async function nodeFiles(
  k: VmKubernetes,
  dir: string,
  vm: { readonly name: string; readonly index: number; readonly address?: string | undefined },
): Promise<{ kubernetes: NonNullable<MachineConfigInput['kubernetes']>; kubeconfig: string }> {
  const { name } = vm;
  const server = guestServer(k.server);
  const caFile = join(dir, 'kube-ca.pem');
  await writePrivateFile(caFile, k.caPem);
  const tokenFile = join(dir, 'bootstrap-token');
  await writePrivateFile(tokenFile, `${k.bootstrapToken}\n`);
  const kubeconfig = join(dir, 'agent.kubeconfig');
  await writePrivateFile(
    kubeconfig,
    stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [
        {
          name: 'lab',
          cluster: {
            server,
            'certificate-authority-data': Buffer.from(k.caPem).toString('base64'),
          },
        },
      ],
      users: [{ name: `molt:agent:${name}`, user: k.agentUser(name) }],
      contexts: [{ name: 'lab', context: { cluster: 'lab', user: `molt:agent:${name}` } }],
      'current-context': 'lab',
    }),
  );
  return {
    kubeconfig,
    kubernetes: {
      // molt install puts the agent's kubeconfig here (`--kubeconfig`).
      kubeconfig: '/molt/state/kubernetes/agent.kubeconfig',
      // Each evicted pod must be Ready on the other node before the budget lets the next one
      // go; under TCG that is tens of seconds a pod, and a control plane on a TCG VM updates a
      // budget's allowed disruptions minutes after its pods are Ready: twice Kubernetes' own 600 s.
      drain: { timeoutSeconds: 1200 },
      node: {
        server,
        caFile,
        bootstrapTokenFile: tokenFile,
        podCidr: podCidr(vm.index),
        sandboxImage: k.sandboxImage,
        ...(vm.address !== undefined && { address: vm.address }),
      },
    },
  };
}
