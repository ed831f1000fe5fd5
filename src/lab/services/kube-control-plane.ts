// SPDX-License-Identifier: Apache-2.0
/**
 * A real Kubernetes control plane on loopback for tests and the lab (docs/kubernetes.md): etcd 3.5,
 * kube-apiserver (TLS from a cluster CA, static-token, bootstrap-token and client-certificate
 * authentication, RBAC and the Node authorizer on),
 * kube-controller-manager (the disruption controller makes PDBs work; Deployments recreate evicted
 * pods; node lifecycle marks silent nodes NotReady) and kube-scheduler, from the binaries
 * `scripts/ensure-kube-bins.sh` builds, with molt's CRDs (deploy/kubernetes/crds.yaml) and the
 * TLS bootstrap bindings (deploy/kubernetes/node-bootstrap.yaml) installed: real kubelets join
 * with a token from {@link KubeControlPlane.bootstrapToken}.
 * Every process is stopped by the PID this harness started.
 *
 * Identities (tokens in `tokens.csv`): `admin` (system:masters) for the harness and the
 * controllers, `molt-operator` (no groups: tests give it only the RBAC molt's manifests in
 * deploy/kubernetes grant), and per node named in {@link KubeControlPlaneOptions.nodes} a kubelet
 * `system:node:<name>`, so the Node authorizer and NodeRestriction constrain lab nodes as they do
 * real kubelets, and an agent `molt:agent:<name>` in group `molt:agents`, so the admission policy
 * of deploy/kubernetes/rbac.yaml confines each agent to its own Node.
 */
import { execFile } from 'node:child_process';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Agent, fetch } from 'undici';
import { apiserverArgs, kubeconfig, writeFiles, type Files } from './kube-files.ts';
import { kubeBinaries } from './kube-binaries.ts';
import {
  applyNodeBootstrapRbac,
  createBootstrapToken,
  type BootstrapTokenOptions,
} from './kube-bootstrap.ts';
import { controllers } from './kube-controllers.ts';
import { hostedSetup, type ApiserverSetup } from './kube-hosted.ts';

export type { ApiserverSetup, HostedComponent, HostedPorts } from './kube-hosted.ts';
export type { BootstrapTokenOptions } from './kube-bootstrap.ts';
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
  /** Node names that get a kubelet and an agent identity. @default [] */
  readonly nodes?: readonly string[];
  /** How long to wait for the whole control plane. @default 120000 */
  readonly startTimeoutMs?: number;
  /** Progress of a first build of the binaries (about 17 min on 2 cores). */
  readonly onProgress?: (line: string) => void;
  /**
   * Run the control plane elsewhere — on lab control-plane machines (docs/adr/0006 §10, 0012 §3)
   * — instead of etcd and the three components here: given how to build each machine's
   * components' command lines, start them and resolve with the URL clients use (a balancer in
   * front of the API servers). The API servers share one serving certificate, so any of them
   * satisfies a client behind the balancer; the controller managers and schedulers elect leaders.
   */
  readonly hostApiservers?: (setup: ApiserverSetup) => Promise<string>;
  /** The Kubernetes version to build and run (a `scripts/ensure-kube-bins.sh` argument). @default kube-versions.env's */
  readonly version?: string;
  /**
   * The address the API server listens on: a lab's bridge address, so machines in their own
   * network namespaces reach it (lab/fleet/network.ts). @default 127.0.0.1
   */
  readonly address?: string;
  /** Keep the control plane's files here (the lab's `kube/`); removed at stop. @default a temp dir */
  readonly dir?: string;
  /**
   * How long a silent node stays Ready (`--node-monitor-grace-period`). @default 10 s: the lab's
   * in-process kubelets never miss a beat; real kubelets on TCG VMs need more.
   */
  readonly nodeMonitorGraceSeconds?: number;
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
  /** PEM of the cluster CA (`caFile`): what clients trust; it signs the API server's certificate. */
  readonly ca: string;
  /** The cluster CA's file, as kubeconfigs name it. */
  readonly caFile: string;
  readonly dir: string;
  /** Directory of the binaries (kubectl is there too). */
  readonly bins: string;
  readonly admin: KubeUser;
  readonly operator: KubeUser;
  /**
   * The agent identity of a node named in the options (`molt:agent:<name>` in `molt:agents`, the
   * group deploy/kubernetes/rbac.yaml binds).
   */
  agent(name: string): KubeUser;
  /** The kubelet identity of a node named in the options. */
  node(name: string): KubeUser;
  /**
   * A new bootstrap token, `<id>.<secret>`, for real kubelets to join with (TLS bootstrap): the
   * kube-system Secret `bootstrap-token-<id>`, in group system:bootstrappers:molt.
   */
  bootstrapToken(o: BootstrapTokenOptions): Promise<string>;
  readonly processes: readonly ManagedProcess[];
  stop(): Promise<void>;
}

/** `dir`, made empty for a new control plane; removed at stop like a temp dir. */
async function ownDir(dir: string): Promise<{ path: string; remove: () => Promise<void> }> {
  const remove = (): Promise<void> => rm(dir, { recursive: true, force: true });
  await remove();
  await mkdir(dir, { recursive: true });
  return { path: dir, remove };
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
  const bins = await kubeBinaries(o.onProgress, o.version);
  const scratch = o.dir === undefined ? await tempDir('kube') : await ownDir(o.dir);
  const processes: ManagedProcess[] = [];
  const stop = async (): Promise<void> => {
    for (const p of [...processes].reverse()) await p.stop(5_000);
    await scratch.remove();
  };
  try {
    const f = await writeFiles(scratch.path, o.nodes ?? [], o.address ?? '127.0.0.1');
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
    await applyNodeBootstrapRbac(bins, user('admin').kubeconfig);
    const admin = user('admin');
    return {
      server: cp.server,
      ca: cp.ca,
      caFile: f.caFile,
      dir: f.dir,
      bins,
      admin,
      operator: user('molt-operator'),
      agent: (name) => user(`molt:agent:${name}`),
      node: (name) => user(`system:node:${name}`),
      bootstrapToken: (b) =>
        createBootstrapToken({ server: cp.server, ca: cp.ca, bearer: admin.token }, b),
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

/** Start the hosted control plane through `host`, or one etcd and one kube-apiserver here. */
async function apiservers(
  bins: string,
  f: Files,
  processes: ManagedProcess[],
  o: KubeControlPlaneOptions,
): Promise<string> {
  const host = o.hostApiservers;
  if (host !== undefined) return host(hostedSetup(bins, f, o.version));
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
      apiserverArgs(f, etcd, { address, port: apiPort }),
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
  const admin = f.users.get('admin')?.token ?? '';
  const ca = await readFile(f.caFile, 'utf8');
  await waitFor(server, '/readyz', { ca, bearer: admin }, timeoutMs);
  // Hosted: the machines run the controller managers and schedulers beside their API servers.
  if (o.hostApiservers === undefined)
    await controllers(bins, f, { server, admin, grace: o.nodeMonitorGraceSeconds }, processes);
  // The controller manager is working once its service-account controller made `default`.
  const sa = '/api/v1/namespaces/default/serviceaccounts/default';
  await waitFor(server, sa, { ca, bearer: admin }, timeoutMs);
  return { server, ca };
}
