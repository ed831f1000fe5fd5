// SPDX-License-Identifier: Apache-2.0
/**
 * The files a lab control plane runs on (kube-control-plane.ts): the service-account key pair, the
 * static tokens of its identities, kubeconfigs that carry them, the cluster CA and the API
 * server's certificates (kube-pki.ts), and the components' command lines.
 */
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { writeClusterPki, type ClusterPki } from './kube-pki.ts';

const token = (): string => randomBytes(16).toString('hex');

export function kubeconfig(server: string, caFile: string, user: string, bearer: string): string {
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'molt-test', cluster: { server, 'certificate-authority': caFile } }],
    users: [{ name: user, user: { token: bearer } }],
    contexts: [{ name: 'molt-test', context: { cluster: 'molt-test', user } }],
    'current-context': 'molt-test',
  });
}

export interface Files {
  readonly dir: string;
  /** The cluster CA's certificate: what clients trust, and what signs kubelets' certificates. */
  readonly caFile: string;
  readonly pki: ClusterPki;
  readonly users: ReadonlyMap<string, { token: string; groups: string }>;
}

/** Every file of a control plane whose API server listens on `address`. */
export async function writeFiles(
  dir: string,
  nodes: readonly string[],
  address: string,
): Promise<Files> {
  const sa = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const files: Record<string, string> = {
    'sa.pub': sa.publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    'sa.key': sa.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
  };
  const users = new Map<string, { token: string; groups: string }>([
    ['admin', { token: token(), groups: 'system:masters' }],
    ['molt-operator', { token: token(), groups: '' }],
    ...nodes.map((n) => [`system:node:${n}`, { token: token(), groups: 'system:nodes' }] as const),
    // Each node's agent its own identity, as deploy/kubernetes/rbac.yaml asks.
    ...nodes.map((n) => [`molt:agent:${n}`, { token: token(), groups: 'molt:agents' }] as const),
  ]);
  files['tokens.csv'] = [...users]
    .map(([user, u], i) => `${u.token},${user},uid-${String(i)},"${u.groups}"`)
    .join('\n');
  for (const [name, content] of Object.entries(files))
    await writeFile(join(dir, name), content, { mode: 0o600 });
  const pki = await writeClusterPki(dir, address);
  return { dir, caFile: pki.caFile, pki, users };
}

/**
 * One API server's command line. Several (hosted mode) share one serving certificate, so any of
 * them satisfies a client behind the balancer.
 */
export function apiserverArgs(
  f: Files,
  etcd: string,
  listen: { readonly address: string; readonly port: number },
): string[] {
  const at = (name: string): string => join(f.dir, name);
  return [
    `--etcd-servers=${etcd}`,
    `--bind-address=${listen.address}`,
    `--advertise-address=${listen.address}`,
    `--secure-port=${String(listen.port)}`,
    `--tls-cert-file=${f.pki.servingCert}`,
    `--tls-private-key-file=${f.pki.servingKey}`,
    // Client certificates the cluster CA signed authenticate: the kubelets' after TLS bootstrap.
    `--client-ca-file=${f.caFile}`,
    '--enable-bootstrap-token-auth=true',
    // The API server's own identity towards kubelets (logs, exec), which they check against the CA.
    `--kubelet-client-certificate=${f.pki.kubeletClientCert}`,
    `--kubelet-client-key=${f.pki.kubeletClientKey}`,
    // Kubelets by their InternalIP first, as kubeadm does: a node's hostname (the default's
    // first choice) resolves nowhere in the lab.
    '--kubelet-preferred-address-types=InternalIP,ExternalIP,Hostname',
    '--service-cluster-ip-range=10.0.0.0/24',
    '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
    `--service-account-key-file=${at('sa.pub')}`,
    `--service-account-signing-key-file=${at('sa.key')}`,
    `--token-auth-file=${at('tokens.csv')}`,
    '--authorization-mode=Node,RBAC',
    '--enable-admission-plugins=NodeRestriction',
    '--endpoint-reconciler-type=none',
    '--allow-privileged=true',
    '--max-requests-inflight=0',
    '--max-mutating-requests-inflight=0',
    '--enable-priority-and-fairness=false',
  ];
}

/**
 * kube-controller-manager's command line: the disruption controller (PDBs), Deployments, node
 * lifecycle (10 s grace) and the service-account controller, quick to notice silent nodes; the
 * CSR approver and signer (with the cluster CA) that give bootstrapping kubelets their client
 * certificates, and the token cleaner that deletes expired bootstrap tokens (off by default).
 * `leaderElect` when several run (hosted on the lab's control-plane machines). Real kubelets on
 * VMs under TCG miss a 10 s grace whenever a neighbour boots: `nodeMonitorGraceSeconds` widens it.
 */
export function controllerManagerArgs(
  f: Files,
  o: {
    readonly kubeconfig: string;
    readonly port: number;
    readonly leaderElect: boolean;
    readonly nodeMonitorGraceSeconds?: number | undefined;
  },
): string[] {
  return [
    `--kubeconfig=${o.kubeconfig}`,
    `--service-account-private-key-file=${join(f.dir, 'sa.key')}`,
    `--root-ca-file=${f.caFile}`,
    `--cluster-signing-cert-file=${f.caFile}`,
    `--cluster-signing-key-file=${f.pki.caKey}`,
    '--controllers=*,tokencleaner',
    '--use-service-account-credentials=false',
    `--leader-elect=${String(o.leaderElect)}`,
    '--bind-address=127.0.0.1',
    `--secure-port=${String(o.port)}`,
    '--node-monitor-period=1s',
    `--node-monitor-grace-period=${String(o.nodeMonitorGraceSeconds ?? 10)}s`,
    '--kube-api-qps=200',
    '--kube-api-burst=400',
    '--concurrent-deployment-syncs=10',
  ];
}

/** kube-scheduler's command line; `leaderElect` when several run. */
export function schedulerArgs(o: {
  readonly kubeconfig: string;
  readonly port: number;
  readonly leaderElect: boolean;
}): string[] {
  return [
    `--kubeconfig=${o.kubeconfig}`,
    `--leader-elect=${String(o.leaderElect)}`,
    '--bind-address=127.0.0.1',
    `--secure-port=${String(o.port)}`,
    '--kube-api-qps=200',
    '--kube-api-burst=400',
  ];
}
