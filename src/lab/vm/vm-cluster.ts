// SPDX-License-Identifier: Apache-2.0
/**
 * The lab's cluster on control-plane VMs (`molt lab up --vm-control-planes M`, docs/adr/0018 §4):
 * what the host holds of a cluster it does not run. The lab makes the cluster's PKI as a user
 * does (`molt pki kubernetes`'s code, with the first control plane's bridge address as the
 * server), issues the client identities the lab's own users need from that CA — the operator
 * (`molt-operator`) and each VM's agent (`molt:agent:<name>` in `molt:agents`, the identities
 * deploy/kubernetes/rbac.yaml confines) — and, once the VMs boot, waits for the API server and
 * applies molt's CRDs and RBAC with the PKI's `admin.conf`. The control-plane VMs' agents
 * bootstrap the rest (node-bootstrap.yaml and the PKI's token).
 */
import { mkdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Agent, fetch } from 'undici';
import { parse } from 'yaml';
import { writePrivateFile } from '../../platform/fs/private-file.ts';
import { packageFile } from '../../platform/package-files.ts';
import { issueLeaf, type PemPair } from '../../platform/pki/certificates.ts';
import { writeKubernetesPki } from '../../platform/pki/kubernetes.ts';
import { kubeconfig, kubernetesPkiPaths } from '../../platform/pki/kubernetes-layout.ts';
import { eventually } from '../../platform/process/managed-process.ts';
import { kubectlSettled } from '../kubectl-settled.ts';
import { apiServerUrl } from './vm-control-plane.ts';

/** The cluster's name: its CAs' subjects, the fleet file's `clusters` entry. */
export const VmClusterName = 'lab-vms';

/** A control-plane VM of the cluster: its name and address on the lab bridge. */
export interface VmMember {
  readonly name: string;
  readonly address: string;
}

/** A user of the cluster, by a kubeconfig file on the host. */
export interface VmClusterUser {
  readonly kubeconfig: string;
}

export interface VmCluster {
  readonly name: string;
  /** The first control plane's API server, as every node and the host reach it. */
  readonly server: string;
  /** PEM of the cluster CA. */
  readonly ca: string;
  /** The directory `molt pki kubernetes` wrote: `molt install --kube-pki` takes it. */
  readonly pkiDir: string;
  readonly members: readonly VmMember[];
  /** Directory of the host's Kubernetes binaries (kubectl): the control planes' version. */
  readonly bins: string;
  /** The control planes' Kubernetes version (`v1.35.4`). */
  readonly version: string;
  /** The control plane every release of the VMs carries: {@link bins}. */
  readonly controlPlaneImage: string;
  readonly admin: VmClusterUser;
  readonly operator: VmClusterUser;
  /** The PKI's bootstrap token: the first control plane registers it, workers join with it. */
  readonly bootstrapToken: string;
  /** A VM agent's kubeconfig `user` (a client certificate of the cluster CA). */
  agentUser(name: string): Record<string, string>;
  /** Wait until the API server answers, then apply molt's CRDs and RBAC. */
  ready(o: { readonly timeoutMs: number; readonly log: (line: string) => void }): Promise<void>;
  /** The PKI is the lab's: it goes with the lab directory. */
  stop(): Promise<void>;
}

const b64 = (pem: string): string => Buffer.from(pem, 'utf8').toString('base64');

/** Write a kubeconfig for `user` (a client of `ca`) into the PKI's `users/`. */
async function userFile(
  dir: string,
  server: string,
  ca: PemPair,
  user: { commonName: string; organisations: string[] },
): Promise<VmClusterUser> {
  const client = await issueLeaf({ ca, ...user, usages: ['clientAuth'], days: 30 });
  const file = join(dir, 'users', `${user.commonName.replace(/:/g, '_')}.kubeconfig`);
  const content = kubeconfig({
    cluster: VmClusterName,
    server,
    caPem: ca.cert,
    user: user.commonName,
    client,
  });
  await writePrivateFile(file, content);
  return { kubeconfig: file };
}

/** The TLS material of a kubeconfig like `admin.conf`: its CA, client certificate and key. */
export async function adminTls(
  adminConf: string,
): Promise<{ ca: string; cert: string; key: string }> {
  const conf = parse(await readFile(adminConf, 'utf8')) as {
    clusters: { cluster: Record<string, string> }[];
    users: { user: Record<string, string> }[];
  };
  const pem = (b64: string | undefined): string =>
    Buffer.from(b64 ?? '', 'base64').toString('utf8');
  const user = conf.users[0]?.user ?? {};
  return {
    ca: pem(conf.clusters[0]?.cluster['certificate-authority-data']),
    cert: pem(user['client-certificate-data']),
    key: pem(user['client-key-data']),
  };
}

/** GET `/readyz` as the admin until it answers 200. */
async function apiAnswers(server: string, adminConf: string, timeoutMs: number): Promise<void> {
  const dispatcher = new Agent({ connect: await adminTls(adminConf) });
  try {
    await eventually(
      async () => {
        const res = await fetch(`${server}/readyz`, {
          dispatcher,
          signal: AbortSignal.timeout(10_000),
        });
        if (res.status !== 200)
          throw new Error(`readyz: ${String(res.status)} ${await res.text()}`);
      },
      { timeoutMs, intervalMs: 3_000 },
    );
  } finally {
    await dispatcher.close();
  }
}

/**
 * The PKI and identities of a cluster whose control planes are `members` (the first one's API
 * server is the cluster's address), in `<labDir>/kube-pki` (made afresh).
 */
export async function planVmCluster(o: {
  readonly labDir: string;
  readonly members: readonly VmMember[];
  /** Every VM whose agent needs an identity (control planes and workers). */
  readonly agents: readonly string[];
  readonly bins: string;
  readonly version: string;
}): Promise<VmCluster> {
  const [first] = o.members;
  if (first === undefined) throw new Error('a cluster on VMs needs a control-plane VM');
  const pkiDir = join(o.labDir, 'kube-pki');
  await rm(pkiDir, { recursive: true, force: true });
  const server = apiServerUrl(first.address);
  const written = await writeKubernetesPki({
    cluster: VmClusterName,
    dir: pkiDir,
    server,
    sans: o.members.slice(1).map((m) => ({ type: 'ip' as const, value: m.address })),
  });
  const paths = kubernetesPkiPaths(pkiDir);
  await mkdir(join(pkiDir, 'users'), { recursive: true, mode: 0o700 });
  const ca = {
    cert: await readFile(paths.caCert, 'utf8'),
    key: await readFile(paths.caKey, 'utf8'),
  };
  const operator = await userFile(pkiDir, server, ca, {
    commonName: 'molt-operator',
    organisations: [],
  });
  const agents = new Map<string, Record<string, string>>();
  for (const name of o.agents) {
    const client = await issueLeaf({
      ca,
      commonName: `molt:agent:${name}`,
      organisations: ['molt:agents'],
      usages: ['clientAuth'],
      days: 30,
    });
    agents.set(name, {
      'client-certificate-data': b64(client.cert),
      'client-key-data': b64(client.key),
    });
  }
  const admin = { kubeconfig: paths.adminConf };
  return {
    name: VmClusterName,
    server,
    ca: ca.cert,
    pkiDir,
    members: o.members,
    bins: o.bins,
    version: o.version,
    controlPlaneImage: o.bins,
    admin,
    operator,
    bootstrapToken: (await readFile(written.bootstrapToken, 'utf8')).trim(),
    agentUser: (name) => {
      const user = agents.get(name);
      if (user === undefined) throw new Error(`no agent identity for VM ${name}`);
      return user;
    },
    async ready({ timeoutMs, log }) {
      const t = performance.now();
      await apiAnswers(server, admin.kubeconfig, timeoutMs);
      log(
        `Kubernetes: the API server on ${first.name} answers at ${server} (${String(Math.round((performance.now() - t) / 1000))} s)`,
      );
      const deploy = packageFile('deploy', 'kubernetes');
      const settled = (args: readonly string[]) =>
        kubectlSettled(join(o.bins, 'kubectl'), admin.kubeconfig, args);
      await settled(['apply', '-f', join(deploy, 'crds.yaml')]);
      await settled([
        'wait',
        '--for=condition=Established',
        '--timeout=120s',
        '-f',
        join(deploy, 'crds.yaml'),
      ]);
      for (const manifest of ['rbac.yaml', 'operator-rbac.yaml'])
        await settled(['apply', '-f', join(deploy, manifest)]);
      log('Kubernetes: molt’s CRDs and RBAC applied');
    },
    stop: () => Promise.resolve(),
  };
}
