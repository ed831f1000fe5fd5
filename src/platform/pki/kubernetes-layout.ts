// SPDX-License-Identifier: Apache-2.0
/**
 * Where a Kubernetes cluster's PKI lives (docs/adr/0018 §3), laid out as kubeadm lays out
 * `/etc/kubernetes`, so an operator finds every file where they would look: the directory given
 * plays `/etc/kubernetes` and holds the kubeconfigs, and its `pki/` holds the certificates and
 * keys. The cluster's name is the CAs' subject CN (`molt kubernetes CA <cluster>`,
 * `molt front-proxy CA <cluster>`): a CA of another cluster is told apart by its subject alone,
 * with no extra file to lose or to copy wrongly.
 */
import { join } from 'node:path';
import { stringify } from 'yaml';
import type { PemPair } from './certificates.ts';

/** The files, by role, relative to the directory (kubeadm's names). */
export const KubernetesPkiFiles = {
  caCert: 'pki/ca.crt',
  caKey: 'pki/ca.key',
  apiserverCert: 'pki/apiserver.crt',
  apiserverKey: 'pki/apiserver.key',
  kubeletClientCert: 'pki/apiserver-kubelet-client.crt',
  kubeletClientKey: 'pki/apiserver-kubelet-client.key',
  frontProxyCaCert: 'pki/front-proxy-ca.crt',
  frontProxyCaKey: 'pki/front-proxy-ca.key',
  frontProxyClientCert: 'pki/front-proxy-client.crt',
  frontProxyClientKey: 'pki/front-proxy-client.key',
  saKey: 'pki/sa.key',
  saPub: 'pki/sa.pub',
  adminConf: 'admin.conf',
  controllerManagerConf: 'controller-manager.conf',
  schedulerConf: 'scheduler.conf',
} as const;

export type KubernetesPkiFile = keyof typeof KubernetesPkiFiles;

/**
 * The bootstrap token workers join with (`<id>.<secret>`, mode 0600), beside the PKI: the first
 * control-plane machine registers it (`controlPlane.bootstrap`), and a worker's
 * `kubernetes.node.bootstrapTokenFile` names the same file at install. Optional: a PKI an admin
 * made without it is whole, and its cluster gets its tokens some other way.
 */
export const BootstrapTokenFile = 'bootstrap-token';

/** Every file's absolute (or `dir`-relative) path, by role. */
export type KubernetesPkiPaths = { readonly dir: string } & {
  readonly [K in KubernetesPkiFile]: string;
};

export function kubernetesPkiPaths(dir: string): KubernetesPkiPaths {
  const entries = Object.entries(KubernetesPkiFiles).map(([k, f]) => [k, join(dir, f)]);
  return { dir, ...Object.fromEntries(entries) } as KubernetesPkiPaths;
}

/** The files that hold a private key, kubeconfigs included (they embed their client's key). */
export const privateFiles: readonly KubernetesPkiFile[] = [
  'caKey',
  'apiserverKey',
  'kubeletClientKey',
  'frontProxyCaKey',
  'frontProxyClientKey',
  'saKey',
  'adminConf',
  'controllerManagerConf',
  'schedulerConf',
];

export const caCommonName = (cluster: string): string => `molt kubernetes CA ${cluster}`;
export const frontProxyCaCommonName = (cluster: string): string => `molt front-proxy CA ${cluster}`;

/** The leaves' subjects: CN (the user Kubernetes sees) and O (its groups), as kubeadm names them. */
export const leafSubjects = {
  apiserver: { commonName: 'kube-apiserver', organisations: [] },
  kubeletClient: { commonName: 'kube-apiserver-kubelet-client', organisations: ['system:masters'] },
  frontProxyClient: { commonName: 'front-proxy-client', organisations: [] },
  adminConf: { commonName: 'kubernetes-admin', organisations: ['system:masters'] },
  controllerManagerConf: { commonName: 'system:kube-controller-manager', organisations: [] },
  schedulerConf: { commonName: 'system:kube-scheduler', organisations: [] },
} as const;

/** What {@link kubeconfig} embeds. */
export interface KubeconfigInput {
  readonly cluster: string;
  readonly server: string;
  readonly caPem: string;
  readonly user: string;
  readonly client: PemPair;
}

/**
 * A kubeconfig with the CA and the client's certificate and key embedded (`…-data`, base64), as
 * kubeadm writes `admin.conf`: one cluster, one user, one context `<user>@<cluster>`.
 */
export function kubeconfig(o: KubeconfigInput): string {
  const b64 = (pem: string) => Buffer.from(pem, 'utf8').toString('base64');
  const context = `${o.user}@${o.cluster}`;
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      {
        name: o.cluster,
        cluster: { 'certificate-authority-data': b64(o.caPem), server: o.server },
      },
    ],
    users: [
      {
        name: o.user,
        user: {
          'client-certificate-data': b64(o.client.cert),
          'client-key-data': b64(o.client.key),
        },
      },
    ],
    contexts: [{ name: context, context: { cluster: o.cluster, user: o.user } }],
    'current-context': context,
  });
}
