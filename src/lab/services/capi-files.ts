// SPDX-License-Identifier: Apache-2.0
/**
 * What the Cluster API managers of the CAPI slow suite are started with (research §2):
 * their command lines, environment, webhook and runtime-extension client certificates, and which
 * CRDs get the contract labels kustomize would add. Only the paths and ports vary; the rest is fixed.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createCa, issueCertificate, type PemPair } from '../../platform/pki/certificates.ts';

/** The managers, by binary name (scripts/ensure-capi-bins.sh builds each under this name). */
export const CapiManagers = [
  'cluster-api-manager',
  'kubeadm-control-plane-manager',
  'kubeadm-bootstrap-manager',
  'capd-manager',
] as const;
export type CapiManagerName = (typeof CapiManagers)[number];

/** The CRD directories the build script extracts (`crds/<dir>`), core first. */
export const CrdDirs = ['core', 'kubeadm-control-plane', 'kubeadm-bootstrap', 'capd'] as const;
/**
 * Provider CRDs need the contract labels (`cluster.x-k8s.io/<contract>: <versions>`) that the
 * providers' kustomize adds: core finds a referenced object's served contract version by them.
 */
export const LabelledCrdDirs = ['kubeadm-control-plane', 'kubeadm-bootstrap', 'capd'] as const;
export const ContractLabels = [
  'cluster.x-k8s.io/v1beta2=v1beta2',
  'cluster.x-k8s.io/v1beta1=v1beta1',
];

const inPlace = 'RuntimeSDK=true,InPlaceUpdates=true';
/** Feature gates per manager; KCP builds its Runtime SDK client only with InPlaceUpdates on. */
export const FeatureGates: Readonly<Record<CapiManagerName, string | undefined>> = {
  // MachineSet preflight checks hold MachineSets back while the control plane upgrades; off, as researched.
  'cluster-api-manager': `${inPlace},MachineSetPreflightChecks=false`,
  'kubeadm-control-plane-manager': inPlace,
  'kubeadm-bootstrap-manager': undefined,
  'capd-manager': inPlace,
};

/** The managers that call runtime extensions, and so present the client certificate (mTLS). */
const callsExtensions: ReadonlySet<CapiManagerName> = new Set([
  'cluster-api-manager',
  'kubeadm-control-plane-manager',
]);

export interface ManagerPorts {
  readonly webhook: number;
  readonly health: number;
  readonly diagnostics: number;
}

export interface ManagerSetup {
  readonly kubeconfig: string;
  /** Holds `tls.crt` and `tls.key`: the webhook server cannot start without them. */
  readonly webhookCertDir: string;
  readonly ports: ManagerPorts;
  /** The client certificate presented to runtime extensions. */
  readonly extensionClient: { readonly cert: string; readonly key: string };
}

/** A manager's command line: loopback health/diagnostics, no leader election, its own webhook port. */
export function managerArgs(name: CapiManagerName, s: ManagerSetup): string[] {
  const gates = FeatureGates[name];
  return [
    `--kubeconfig=${s.kubeconfig}`,
    '--leader-elect=false',
    `--webhook-port=${String(s.ports.webhook)}`,
    `--webhook-cert-dir=${s.webhookCertDir}`,
    `--health-addr=127.0.0.1:${String(s.ports.health)}`,
    `--diagnostics-address=127.0.0.1:${String(s.ports.diagnostics)}`,
    '--insecure-diagnostics=true',
    ...(gates === undefined ? [] : [`--feature-gates=${gates}`]),
    ...(callsExtensions.has(name)
      ? [
          `--runtime-extension-client-cert-file=${s.extensionClient.cert}`,
          `--runtime-extension-client-key-file=${s.extensionClient.key}`,
        ]
      : []),
  ];
}

/** CAPD's in-memory backend serves each workload cluster's fake API server on POD_IP. */
export function managerEnv(name: CapiManagerName, base: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return name === 'capd-manager' ? { ...base, POD_IP: '127.0.0.1' } : { ...base };
}

/** The certificates of a management plane, all signed by one CA the tests can issue more from. */
export interface CapiPki {
  readonly ca: PemPair;
  readonly caFile: string;
  /** Per manager: the directory with its webhook serving `tls.crt`/`tls.key` (SAN 127.0.0.1). */
  readonly webhookCertDirs: ReadonlyMap<CapiManagerName, string>;
  /** The managers' client certificate to runtime extensions (files). */
  readonly extensionClient: { readonly cert: string; readonly key: string };
}

/** Write a CA, one webhook certificate per manager, and the runtime-extension client certificate. */
export async function writeCapiPki(dir: string): Promise<CapiPki> {
  const pki = join(dir, 'pki');
  await mkdir(pki, { recursive: true });
  const ca = await createCa({ name: 'molt capi test CA' });
  const caFile = join(pki, 'ca.crt');
  await writeFile(caFile, ca.cert);
  const webhookCertDirs = new Map<CapiManagerName, string>();
  for (const name of CapiManagers) {
    const d = join(pki, name);
    const c = await issueCertificate({ ca, role: 'node', name, sans: ['127.0.0.1'] });
    await mkdir(d, { recursive: true });
    await writeFile(join(d, 'tls.crt'), c.cert);
    await writeFile(join(d, 'tls.key'), c.key, { mode: 0o600 });
    webhookCertDirs.set(name, d);
  }
  // `node` role: the certificate carries clientAuth (it carries serverAuth too; harmless here).
  const client = await issueCertificate({ ca, role: 'node', name: 'capi-runtime-client' });
  const extensionClient = { cert: join(pki, 'client.crt'), key: join(pki, 'client.key') };
  await writeFile(extensionClient.cert, client.cert);
  await writeFile(extensionClient.key, client.key, { mode: 0o600 });
  return { ca, caFile, webhookCertDirs, extensionClient };
}
