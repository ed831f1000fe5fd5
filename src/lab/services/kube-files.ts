// SPDX-License-Identifier: Apache-2.0
/**
 * The files a lab control plane runs on (kube-control-plane.ts): the service-account key pair, the
 * static tokens of its identities, kubeconfigs that carry them, the API server's serving
 * certificate and command line.
 */
import { execFile } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { stringify } from 'yaml';

const run = promisify(execFile);

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
  /** The API's self-signed serving certificate (`--cert-dir`), which clients trust as the CA. */
  readonly caFile: string;
  readonly users: ReadonlyMap<string, { token: string; groups: string }>;
}

export async function writeFiles(dir: string, nodes: readonly string[]): Promise<Files> {
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
  return { dir, caFile: join(dir, 'serving', 'apiserver.crt'), users };
}

/**
 * A serving certificate for 127.0.0.1 and localhost that several API servers share (hosted mode);
 * self-signed, so clients trust it as their CA, as they trust `--cert-dir`'s in the single mode.
 */
export async function sharedServingCert(f: Files): Promise<{ cert: string; key: string }> {
  const cert = f.caFile;
  const key = join(f.dir, 'serving', 'apiserver.key');
  await mkdir(join(f.dir, 'serving'), { recursive: true });
  await run('openssl', [
    ...['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '7'],
    ...['-keyout', key, '-out', cert, '-subj', '/CN=kube-apiserver'],
    ...['-addext', 'subjectAltName=IP:127.0.0.1,DNS:localhost'],
  ]);
  return { cert, key };
}

export function apiserverArgs(
  f: Files,
  etcd: string,
  listen: { readonly address: string; readonly port: number },
  tls: { readonly certDir: string } | { readonly cert: string; readonly key: string },
): string[] {
  const at = (name: string): string => join(f.dir, name);
  return [
    `--etcd-servers=${etcd}`,
    // The self-signed certificate of `--cert-dir` names the advertised address.
    `--bind-address=${listen.address}`,
    `--advertise-address=${listen.address}`,
    `--secure-port=${String(listen.port)}`,
    ...('certDir' in tls
      ? [`--cert-dir=${tls.certDir}`]
      : [`--tls-cert-file=${tls.cert}`, `--tls-private-key-file=${tls.key}`]),
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
 * lifecycle (10 s grace) and the service-account controller, quick to notice silent nodes.
 * `leaderElect` when several run (hosted on the lab's control-plane machines).
 */
export function controllerManagerArgs(
  f: Files,
  o: { readonly kubeconfig: string; readonly port: number; readonly leaderElect: boolean },
): string[] {
  return [
    `--kubeconfig=${o.kubeconfig}`,
    `--service-account-private-key-file=${join(f.dir, 'sa.key')}`,
    `--root-ca-file=${f.caFile}`,
    '--use-service-account-credentials=false',
    `--leader-elect=${String(o.leaderElect)}`,
    '--bind-address=127.0.0.1',
    `--secure-port=${String(o.port)}`,
    '--node-monitor-period=1s',
    '--node-monitor-grace-period=10s',
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
