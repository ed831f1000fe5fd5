// SPDX-License-Identifier: Apache-2.0
/**
 * The lab control plane's cluster CA, made with openssl as kubeadm lays one out (`ca.crt`,
 * `ca.key`): it signs the API server's serving certificate (so clients, and kubelets that join by
 * TLS bootstrap, trust the CA rather than one server's certificate), the API server's client
 * certificate towards kubelets, and — through the controller manager's CSR signer — the kubelets'
 * own client certificates, which the API server accepts because it names the CA in
 * `--client-ca-file`.
 */
import { execFile } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** Long enough for any lab; short enough that a leaked key is worth little. */
const Days = '30';

export interface ClusterPki {
  readonly caFile: string;
  readonly caKey: string;
  /** The API server's serving certificate and key. */
  readonly servingCert: string;
  readonly servingKey: string;
  /** The API server's client certificate towards kubelets (`system:masters`). */
  readonly kubeletClientCert: string;
  readonly kubeletClientKey: string;
}

/**
 * The names the API server is reached by: loopback, the listen address, 10.0.2.2 (a VM under
 * QEMU's user networking reaches the host's loopback there), the first service address and the
 * in-cluster names of the `kubernetes` Service.
 */
export function servingNames(address: string): string[] {
  const ips = [...new Set(['127.0.0.1', address, '10.0.2.2', '10.0.0.1'])];
  const dns = [
    'localhost',
    'kubernetes',
    'kubernetes.default',
    'kubernetes.default.svc',
    'kubernetes.default.svc.cluster.local',
  ];
  return [...ips.map((ip) => `IP:${ip}`), ...dns.map((d) => `DNS:${d}`)];
}

/** A key and a certificate for `subject`, signed by the CA, with `extensions` (openssl's syntax). */
async function issue(
  ca: { readonly cert: string; readonly key: string },
  o: {
    readonly dir: string;
    readonly name: string;
    readonly subject: string;
    readonly extensions: readonly string[];
  },
): Promise<{ cert: string; key: string }> {
  const { dir, name, subject, extensions } = o;
  const [key, csr, cert, ext] = [`${name}.key`, `${name}.csr`, `${name}.crt`, `${name}.ext`].map(
    (file) => join(dir, file),
  ) as [string, string, string, string];
  await run('openssl', [
    ...['req', '-new', '-newkey', 'rsa:2048', '-nodes'],
    ...['-keyout', key, '-out', csr, '-subj', subject],
  ]);
  await writeFile(ext, `${extensions.join('\n')}\n`);
  await run('openssl', [
    ...['x509', '-req', '-in', csr, '-CA', ca.cert, '-CAkey', ca.key, '-CAcreateserial'],
    ...['-days', Days, '-sha256', '-extfile', ext, '-out', cert],
  ]);
  return { cert, key };
}

/** Make the CA and the API server's certificates under `dir/pki`, its serving one for `address`. */
export async function writeClusterPki(dir: string, address: string): Promise<ClusterPki> {
  const pki = join(dir, 'pki');
  await mkdir(pki, { recursive: true, mode: 0o700 });
  const ca = { cert: join(pki, 'ca.crt'), key: join(pki, 'ca.key') };
  await run('openssl', [
    ...['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', Days, '-sha256'],
    ...['-keyout', ca.key, '-out', ca.cert, '-subj', '/CN=molt-lab-kubernetes-ca'],
    ...['-addext', 'basicConstraints=critical,CA:TRUE'],
    ...['-addext', 'keyUsage=critical,keyCertSign,cRLSign,digitalSignature'],
  ]);
  const leaf = [
    'basicConstraints=critical,CA:FALSE',
    'keyUsage=critical,digitalSignature,keyEncipherment',
  ];
  const serving = await issue(ca, {
    dir: pki,
    name: 'apiserver',
    subject: '/CN=kube-apiserver',
    extensions: [
      ...leaf,
      'extendedKeyUsage=serverAuth',
      `subjectAltName=${servingNames(address).join(',')}`,
    ],
  });
  const client = await issue(ca, {
    dir: pki,
    name: 'apiserver-kubelet-client',
    subject: '/O=system:masters/CN=kube-apiserver-kubelet-client',
    extensions: [...leaf, 'extendedKeyUsage=clientAuth'],
  });
  return {
    caFile: ca.cert,
    caKey: ca.key,
    servingCert: serving.cert,
    servingKey: serving.key,
    kubeletClientCert: client.cert,
    kubeletClientKey: client.key,
  };
}
