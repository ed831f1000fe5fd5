// SPDX-License-Identifier: Apache-2.0
/**
 * A Kubernetes cluster's PKI, made by molt (docs/adr/0018 §3) so nobody types openssl at a
 * console: the cluster CA and what it signs (the API server's serving certificate, its client
 * certificate towards kubelets, the kubeconfigs of the admin, the controller manager and the
 * scheduler), the front-proxy CA and its client, the service-account signing keys, and a bootstrap
 * token for the workers to join with. Every key is EC P-256, which Kubernetes accepts for
 * certificates and service-account tokens (ES256).
 * Layout and names: `kubernetes-layout.ts`; the checker: `kubernetes-check.ts`.
 *
 * Every file is written 0600 from its first byte and the directories are 0700: the kubeconfigs
 * embed keys, and one mode for all leaves nothing to get wrong. A non-empty directory is refused
 * unless `force`: a second PKI over the first would orphan every kubelet the first CA signed.
 */
import { X509Certificate } from 'node:crypto';
import { chmod, mkdir, readdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { ErrorCode, MoltError } from '../../protocol/index.ts';
import { writePrivateFile } from '../fs/private-file.ts';
import { newBootstrapToken } from '../kube/bootstrap-token.ts';
import {
  createCa,
  createKeyPair,
  issueLeaf,
  type PemPair,
  type SubjectAltName,
} from './certificates.ts';
import {
  checkClusterName,
  checkDnsDomain,
  checkServer,
  firstServiceAddress,
  serverSan,
  type Checked,
} from './kubernetes-input.ts';
import {
  BootstrapTokenFile,
  caCommonName,
  frontProxyCaCommonName,
  kubeconfig,
  kubernetesPkiPaths,
  leafSubjects,
  type KubernetesPkiFile,
  type KubernetesPkiPaths,
} from './kubernetes-layout.ts';

export const DefaultServiceCidr = '10.96.0.0/12';
export const DefaultDnsDomain = 'cluster.local';
/** The CAs' lifetime, as kubeadm's: ten years. */
const CaDays = 3650;

/** Options of {@link writeKubernetesPki}. */
export interface KubernetesPkiOptions {
  readonly cluster: string;
  /** The directory that plays `/etc/kubernetes`; created 0700 when missing. */
  readonly dir: string;
  /** The API server's URL in the kubeconfigs; its host is also a SAN of the serving certificate. */
  readonly server: string;
  /** More names of the API server's serving certificate. */
  readonly sans?: readonly SubjectAltName[];
  /** @default 10.96.0.0/12 */
  readonly serviceCidr?: string;
  /** @default cluster.local */
  readonly dnsDomain?: string;
  /** Validity of every certificate but the CAs' (ten years). @default 365 */
  readonly days?: number;
  /** Write into a non-empty directory, replacing the files of a PKI there. */
  readonly force?: boolean;
  /** Start of validity; tests back-date it. @default now */
  readonly now?: Date;
}

/** What was written, for the command's output. */
export interface WrittenKubernetesPki {
  readonly cluster: string;
  readonly paths: KubernetesPkiPaths;
  readonly caFingerprint256: string;
  readonly apiserverNames: string;
  readonly notAfter: string;
  readonly caNotAfter: string;
  /** The file of the bootstrap token workers join with. */
  readonly bootstrapToken: string;
}

/**
 * Make the cluster's PKI in `o.dir`.
 * @throws MoltError `MOLT_BAD_INPUT` for a bad name, SAN, CIDR, domain or URL;
 *   `MOLT_KUBE_PKI_INVALID` for a non-empty directory without `force`.
 */
export async function writeKubernetesPki(o: KubernetesPkiOptions): Promise<WrittenKubernetesPki> {
  const cluster = input('the cluster name', o.cluster, checkClusterName(o.cluster));
  const server = input('the server', o.server, checkServer(o.server));
  const cidr = o.serviceCidr ?? DefaultServiceCidr;
  const serviceIp = input('the service CIDR', cidr, firstServiceAddress(cidr));
  const domain = o.dnsDomain ?? DefaultDnsDomain;
  input('the DNS domain', domain, checkDnsDomain(domain));
  const paths = kubernetesPkiPaths(o.dir);
  await prepare(paths, o.force === true);
  const now = o.now ?? new Date();
  const days = o.days ?? 365;
  const ca = await createCa({ name: caCommonName(cluster), days: CaDays, now });
  const frontProxyCa = await createCa({ name: frontProxyCaCommonName(cluster), days: CaDays, now });
  const names = apiserverSans(o.sans ?? [], serverSan(server), serviceIp, domain);
  const leaf = (signer: PemPair, subject: keyof typeof leafSubjects, serving = false) =>
    issueLeaf({
      ca: signer,
      ...leafSubjects[subject],
      usages: serving ? ['serverAuth'] : ['clientAuth'],
      ...(serving && { sans: names }),
      days,
      now,
    });
  const apiserver = await leaf(ca, 'apiserver', true);
  const conf = async (subject: 'adminConf' | 'controllerManagerConf' | 'schedulerConf') =>
    kubeconfig({
      cluster,
      server: o.server,
      caPem: ca.cert,
      user: leafSubjects[subject].commonName,
      client: await leaf(ca, subject),
    });
  const sa = await createKeyPair();
  const files: Record<KubernetesPkiFile, string> = {
    ...pairFiles('ca', ca),
    ...pairFiles('apiserver', apiserver),
    ...pairFiles('kubeletClient', await leaf(ca, 'kubeletClient')),
    ...pairFiles('frontProxyCa', frontProxyCa),
    ...pairFiles('frontProxyClient', await leaf(frontProxyCa, 'frontProxyClient')),
    saKey: sa.key,
    saPub: sa.pub,
    adminConf: await conf('adminConf'),
    controllerManagerConf: await conf('controllerManagerConf'),
    schedulerConf: await conf('schedulerConf'),
  };
  for (const [file, content] of Object.entries(files))
    await writePrivateFile(paths[file as KubernetesPkiFile], content);
  const token = join(o.dir, BootstrapTokenFile);
  await writePrivateFile(token, `${newBootstrapToken()}\n`);
  return { ...describe(cluster, paths, ca.cert, apiserver.cert), bootstrapToken: token };
}

/** The serving certificate's names: the given ones, the server's host, and kubeadm's. */
function apiserverSans(
  given: readonly SubjectAltName[],
  server: SubjectAltName,
  serviceIp: string,
  domain: string,
): SubjectAltName[] {
  const dns = ['kubernetes', 'kubernetes.default', 'kubernetes.default.svc'];
  return [
    ...[...dns, `kubernetes.default.svc.${domain}`, 'localhost'].map((value) => ({
      type: 'dns' as const,
      value,
    })),
    { type: 'ip', value: '127.0.0.1' },
    { type: 'ip', value: serviceIp },
    server,
    ...given,
  ];
}

function pairFiles<
  P extends 'ca' | 'apiserver' | 'kubeletClient' | 'frontProxyCa' | 'frontProxyClient',
>(prefix: P, pair: PemPair): Record<`${P}Cert` | `${P}Key`, string> {
  return { [`${prefix}Cert`]: pair.cert, [`${prefix}Key`]: pair.key } as Record<
    `${P}Cert` | `${P}Key`,
    string
  >;
}

function input<T>(what: string, given: string, checked: Checked<T>): T {
  if (checked.ok) return checked.value;
  throw new MoltError(ErrorCode.BadInput, `${what} ${given} ${checked.reason}`);
}

/** Create the directories 0700, refusing a non-empty one unless `force`. */
async function prepare(paths: KubernetesPkiPaths, force: boolean): Promise<void> {
  const entries = await readdir(paths.dir).catch((e: unknown) => {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw e;
  });
  if (entries.length > 0 && !force)
    throw new MoltError(
      ErrorCode.KubePkiInvalid,
      `${paths.dir} is not empty; molt does not write a cluster's PKI over other files`,
      { hint: 'choose an empty directory, or pass --force to replace the PKI files in it' },
    );
  for (const dir of [paths.dir, dirname(paths.caCert)]) {
    await mkdir(dir, { recursive: true, mode: 0o700 });
    // mkdir leaves an existing directory's mode as it was, and its mode is subject to the umask.
    await chmod(dir, 0o700);
  }
}

function describe(
  cluster: string,
  paths: KubernetesPkiPaths,
  caPem: string,
  apiserverPem: string,
): Omit<WrittenKubernetesPki, 'bootstrapToken'> {
  const ca = new X509Certificate(caPem);
  const apiserver = new X509Certificate(apiserverPem);
  return {
    cluster,
    paths,
    caFingerprint256: ca.fingerprint256,
    apiserverNames: apiserver.subjectAltName ?? '',
    notAfter: apiserver.validToDate.toISOString(),
    caNotAfter: ca.validToDate.toISOString(),
  };
}
