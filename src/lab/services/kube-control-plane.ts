// SPDX-License-Identifier: Apache-2.0
/**
 * A real Kubernetes control plane on loopback for tests and the lab (docs/kubernetes.md): etcd 3.5,
 * kube-apiserver (TLS, static-token authentication, RBAC and the Node authorizer on),
 * kube-controller-manager (the disruption controller makes PDBs work; Deployments recreate evicted
 * pods; node lifecycle marks silent nodes NotReady) and kube-scheduler, from the binaries
 * `scripts/ensure-kube-bins.sh` builds, with molt's CRDs (deploy/kubernetes/crds.yaml) installed.
 * Every process is stopped by the PID this harness started.
 *
 * Identities (tokens in `tokens.csv`): `admin` (system:masters) for the harness and the
 * controllers, `molt-operator` and `molt-agent` (no groups: tests give them only the RBAC molt's
 * manifests in deploy/kubernetes grant),
 * and one `system:node:<name>` per node named in {@link KubeControlPlaneOptions.nodes}, so the
 * Node authorizer and NodeRestriction constrain lab nodes as they do real kubelets.
 */
import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Agent, fetch } from 'undici';
import { stringify } from 'yaml';
import { packageFile } from '../../platform/package-files.ts';
import { freePort } from '../../platform/process/free-port.ts';
import {
  eventually,
  startProcess,
  tempDir,
  type ManagedProcess,
} from '../../platform/process/managed-process.ts';

const run = promisify(execFile);

export interface KubeControlPlaneOptions {
  /** Node names that get a kubelet identity (`system:node:<name>`). @default [] */
  readonly nodes?: readonly string[];
  /** How long to wait for the whole control plane. @default 120000 */
  readonly startTimeoutMs?: number;
  /** Progress of a first build of the binaries (about 17 min on 2 cores). */
  readonly onProgress?: (line: string) => void;
  /**
   * Run the API servers elsewhere — on lab control-plane machines (docs/adr/0006 §10) — instead of
   * one etcd and one kube-apiserver here: given how to build an API server's command line, start
   * them and resolve with the URL clients use (a balancer in front of them). They share one
   * serving certificate, so any of them satisfies a client behind the balancer.
   */
  readonly hostApiservers?: (setup: ApiserverSetup) => Promise<string>;
  /**
   * The address the API server listens on: a lab's bridge address, so machines in their own
   * network namespaces reach it (lab/fleet/network.ts). @default 127.0.0.1
   */
  readonly address?: string;
  /** Keep the control plane's files here (the lab's `kube/`); removed at stop. @default a temp dir */
  readonly dir?: string;
}

export interface ApiserverSetup {
  /** Directory of the binaries (kube-apiserver, etcd 3.5). */
  readonly bins: string;
  /** One API server's arguments: its etcd servers, its port, and a scratch directory of its own. */
  args(o: {
    readonly etcd: readonly string[];
    readonly port: number;
    readonly dir: string;
  }): string[];
}

/** A user of the API: its bearer token and a kubeconfig file that carries it. */
export interface KubeUser {
  readonly name: string;
  readonly token: string;
  readonly kubeconfig: string;
}

export interface KubeControlPlane {
  /** `https://127.0.0.1:<port>` (or the address asked). */
  readonly server: string;
  /** PEM of the API's self-signed serving certificate: what clients trust. */
  readonly ca: string;
  readonly dir: string;
  /** Directory of the binaries (kubectl is there too). */
  readonly bins: string;
  readonly admin: KubeUser;
  readonly operator: KubeUser;
  /** The node agent's identity (no groups: tests bind deploy/kubernetes/rbac.yaml to it). */
  readonly agent: KubeUser;
  /** The kubelet identity of a node named in the options. */
  node(name: string): KubeUser;
  readonly processes: readonly ManagedProcess[];
  stop(): Promise<void>;
}

/**
 * Build (or find cached) the binaries; resolves with their directory. The script's progress lines
 * (stderr: stages, and a progress bar while it compiles) go to `onProgress`.
 */
export async function kubeBinaries(onProgress?: (line: string) => void): Promise<string> {
  const script = packageFile('scripts', 'ensure-kube-bins.sh');
  const child = spawn('bash', [script], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
  createInterface({ input: child.stderr }).on('line', (line) => {
    stderr += `${line}\n`;
    onProgress?.(line);
  });
  const [code] = (await once(child, 'close')) as [number | null];
  if (code !== 0)
    throw new Error(
      `scripts/ensure-kube-bins.sh failed (${String(code)}):\n${stderr.slice(-3000)}`,
    );
  return stdout.trim().split('\n').at(-1) ?? '';
}

/** `dir`, made empty for a new control plane; removed at stop like a temp dir. */
async function ownDir(dir: string): Promise<{ path: string; remove: () => Promise<void> }> {
  const remove = (): Promise<void> => rm(dir, { recursive: true, force: true });
  await remove();
  await mkdir(dir, { recursive: true });
  return { path: dir, remove };
}

const token = (): string => randomBytes(16).toString('hex');

function kubeconfig(server: string, caFile: string, user: string, bearer: string): string {
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'molt-test', cluster: { server, 'certificate-authority': caFile } }],
    users: [{ name: user, user: { token: bearer } }],
    contexts: [{ name: 'molt-test', context: { cluster: 'molt-test', user } }],
    'current-context': 'molt-test',
  });
}

interface Files {
  readonly dir: string;
  /** The API's self-signed serving certificate (`--cert-dir`), which clients trust as the CA. */
  readonly caFile: string;
  readonly users: ReadonlyMap<string, { token: string; groups: string }>;
}

async function writeFiles(dir: string, nodes: readonly string[]): Promise<Files> {
  const sa = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const files: Record<string, string> = {
    'sa.pub': sa.publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    'sa.key': sa.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
  };
  const users = new Map<string, { token: string; groups: string }>([
    ['admin', { token: token(), groups: 'system:masters' }],
    ['molt-operator', { token: token(), groups: '' }],
    ['molt-agent', { token: token(), groups: '' }],
    ...nodes.map((n) => [`system:node:${n}`, { token: token(), groups: 'system:nodes' }] as const),
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
async function sharedServingCert(f: Files): Promise<{ cert: string; key: string }> {
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

function apiserverArgs(
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

/** Wait until GET `path` answers 200: `/readyz`, or an object a controller creates. */
async function waitFor(
  server: string,
  path: string,
  auth: { readonly ca: string; readonly bearer: string },
  timeoutMs: number,
) {
  const { ca, bearer } = auth;
  const dispatcher = new Agent({ connect: { ca } });
  try {
    await eventually(
      async () => {
        const res = await fetch(`${server}${path}`, {
          dispatcher,
          headers: { authorization: `Bearer ${bearer}` },
        });
        if (res.status !== 200)
          throw new Error(`readyz: ${String(res.status)} ${await res.text()}`);
      },
      { timeoutMs, intervalMs: 250 },
    );
  } finally {
    await dispatcher.close();
  }
}

/** Start the control plane; resolves once the API is ready and the controllers have started. */
export async function startKubeControlPlane(
  o: KubeControlPlaneOptions = {},
): Promise<KubeControlPlane> {
  const bins = await kubeBinaries(o.onProgress);
  const scratch = o.dir === undefined ? await tempDir('kube') : await ownDir(o.dir);
  const processes: ManagedProcess[] = [];
  const stop = async (): Promise<void> => {
    for (const p of [...processes].reverse()) await p.stop(5_000);
    await scratch.remove();
  };
  try {
    const f = await writeFiles(scratch.path, o.nodes ?? []);
    const cp = await launch(bins, f, processes, o);
    const user = (name: string): KubeUser => {
      const u = f.users.get(name);
      if (u === undefined)
        throw new Error(`no Kubernetes user ${name} (list nodes in the options)`);
      const file = join(f.dir, `${name.replace(/:/g, '_')}.kubeconfig`);
      return { name, token: u.token, kubeconfig: file };
    };
    for (const name of f.users.keys()) {
      const u = user(name);
      await writeFile(u.kubeconfig, kubeconfig(cp.server, f.caFile, name, u.token), {
        mode: 0o600,
      });
    }
    await installCrds(bins, user('admin').kubeconfig);
    return {
      server: cp.server,
      ca: cp.ca,
      dir: f.dir,
      bins,
      admin: user('admin'),
      operator: user('molt-operator'),
      agent: user('molt-agent'),
      node: (name) => user(`system:node:${name}`),
      processes,
      stop,
    };
  } catch (e) {
    const tail = processes.map((p) => `--- ${p.name}\n${p.output().slice(-2000)}`).join('\n');
    await stop();
    throw new Error(`the Kubernetes control plane did not start: ${String(e)}\n${tail}`, {
      cause: e,
    });
  }
}

/** molt's CustomResourceDefinitions, applied as a user would, and waited for until served. */
async function installCrds(bins: string, kubeconfigFile: string): Promise<void> {
  const crds = packageFile('deploy', 'kubernetes', 'crds.yaml');
  const kubectl = join(bins, 'kubectl');
  await run(kubectl, ['--kubeconfig', kubeconfigFile, 'apply', '-f', crds]);
  await run(kubectl, [
    '--kubeconfig',
    kubeconfigFile,
    'wait',
    '--for=condition=Established',
    '--timeout=60s',
    '-f',
    crds,
  ]);
}

/** Start the hosted API servers through `host`, or one etcd and one kube-apiserver here. */
async function apiservers(
  bins: string,
  f: Files,
  processes: ManagedProcess[],
  o: KubeControlPlaneOptions,
): Promise<string> {
  const host = o.hostApiservers;
  if (host !== undefined) {
    const tls = await sharedServingCert(f);
    return host({
      bins,
      args: (a) => [
        ...apiserverArgs(f, a.etcd.join(','), { address: '127.0.0.1', port: a.port }, tls),
        // The lab firmware ends a boot's services by a path in the machine root.
        `--cert-dir=${a.dir}`,
      ],
    });
  }
  const address = o.address ?? '127.0.0.1';
  const [etcdClient, etcdPeer, apiPort] = await Promise.all([freePort(), freePort(), freePort()]);
  const etcd = `http://127.0.0.1:${String(etcdClient)}`;
  const peer = `http://127.0.0.1:${String(etcdPeer)}`;
  processes.push(
    startProcess('etcd', join(bins, 'etcd'), [
      '--name=kube',
      `--data-dir=${join(f.dir, 'etcd')}`,
      `--listen-client-urls=${etcd}`,
      `--advertise-client-urls=${etcd}`,
      `--listen-peer-urls=${peer}`,
      `--initial-advertise-peer-urls=${peer}`,
      `--initial-cluster=kube=${peer}`,
      '--unsafe-no-fsync',
      '--log-level=warn',
    ]),
  );
  processes.push(
    startProcess(
      'kube-apiserver',
      join(bins, 'kube-apiserver'),
      apiserverArgs(f, etcd, { address, port: apiPort }, { certDir: join(f.dir, 'serving') }),
    ),
  );
  return `https://${address}:${String(apiPort)}`;
}

async function launch(
  bins: string,
  f: Files,
  processes: ManagedProcess[],
  o: KubeControlPlaneOptions,
): Promise<{ server: string; ca: string }> {
  const timeoutMs = o.startTimeoutMs ?? 120_000;
  const server = await apiservers(bins, f, processes, o);
  const [kcmPort, schedPort] = await Promise.all([freePort(), freePort()]);
  const admin = f.users.get('admin')?.token ?? '';
  const ca = await eventually(() => readFile(f.caFile, 'utf8'), { timeoutMs, intervalMs: 100 });
  await waitFor(server, '/readyz', { ca, bearer: admin }, timeoutMs);
  const adminConfig = join(f.dir, 'controllers.kubeconfig');
  await writeFile(adminConfig, kubeconfig(server, f.caFile, 'admin', admin), { mode: 0o600 });
  processes.push(
    startProcess('kube-controller-manager', join(bins, 'kube-controller-manager'), [
      `--kubeconfig=${adminConfig}`,
      `--service-account-private-key-file=${join(f.dir, 'sa.key')}`,
      `--root-ca-file=${f.caFile}`,
      '--use-service-account-credentials=false',
      '--leader-elect=false',
      '--bind-address=127.0.0.1',
      `--secure-port=${String(kcmPort)}`,
      '--node-monitor-period=1s',
      '--node-monitor-grace-period=10s',
      '--kube-api-qps=200',
      '--kube-api-burst=400',
      '--concurrent-deployment-syncs=10',
    ]),
  );
  processes.push(
    startProcess('kube-scheduler', join(bins, 'kube-scheduler'), [
      `--kubeconfig=${adminConfig}`,
      '--leader-elect=false',
      '--bind-address=127.0.0.1',
      `--secure-port=${String(schedPort)}`,
      '--kube-api-qps=200',
      '--kube-api-burst=400',
    ]),
  );
  // The controller manager is working once its service-account controller made `default`.
  const sa = '/api/v1/namespaces/default/serviceaccounts/default';
  await waitFor(server, sa, { ca, bearer: admin }, timeoutMs);
  return { server, ca };
}
