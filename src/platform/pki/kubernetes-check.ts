// SPDX-License-Identifier: Apache-2.0
/**
 * The check of a cluster's PKI (docs/adr/0018 §3) before a machine is given it: every file of
 * `kubernetes-layout.ts` is there, no key is open to group or others, both CAs name the cluster,
 * every certificate is signed by its CA, matches its key, has the subject its component needs and
 * is valid now, the kubeconfigs trust this cluster's CA, and `sa.pub` is `sa.key`'s. Anything else
 * is `MOLT_KUBE_PKI_INVALID` naming the file and what is wrong: a control plane started on
 * another cluster's CA, or on an expired certificate, fails later and far less clearly.
 */
import { createPrivateKey, createPublicKey, X509Certificate, type KeyObject } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { parse } from 'yaml';
import { z } from 'zod';
import { ErrorCode, MoltError } from '../../protocol/index.ts';
import { BootstrapTokenPattern } from '../../protocol/machine-config-node.ts';
import {
  BootstrapTokenFile,
  caCommonName,
  frontProxyCaCommonName,
  kubernetesPkiPaths,
  leafSubjects,
  privateFiles,
  type KubernetesPkiFile,
  type KubernetesPkiPaths,
} from './kubernetes-layout.ts';

/** Options of {@link checkKubernetesPki}. */
export interface CheckKubernetesPkiOptions {
  /** The cluster the PKI must be for (its CAs' subjects name it). */
  readonly cluster: string;
  /** @default now */
  readonly now?: Date;
}

/**
 * Check the PKI in `dir` (the directory `writeKubernetesPki` wrote) and answer its files' paths.
 * @throws MoltError `MOLT_KUBE_PKI_INVALID`
 */
export async function checkKubernetesPki(
  dir: string,
  o: CheckKubernetesPkiOptions,
): Promise<KubernetesPkiPaths> {
  const paths = kubernetesPkiPaths(dir);
  const now = o.now ?? new Date();
  await requireFiles(paths);
  const ca = await authority(paths, 'ca', caCommonName(o.cluster), now);
  const frontProxyCa = await authority(
    paths,
    'frontProxyCa',
    frontProxyCaCommonName(o.cluster),
    now,
  );
  const leaves = [
    ['apiserver', ca],
    ['kubeletClient', ca],
    ['frontProxyClient', frontProxyCa],
  ] as const;
  for (const [leaf, signer] of leaves) {
    const [certPath, keyPath] = [paths[`${leaf}Cert` as const], paths[`${leaf}Key` as const]];
    const held = { path: certPath, keyName: keyPath, now };
    const [cert, key] = [await certificate(certPath), await privateKey(keyPath)];
    checkLeaf({ ...held, cert, key }, signer, leafSubjects[leaf].commonName);
  }
  for (const conf of ['adminConf', 'controllerManagerConf', 'schedulerConf'] as const)
    await checkKubeconfig(paths[conf], ca, leafSubjects[conf].commonName, now);
  await checkServiceAccount(paths);
  return paths;
}

/**
 * The PKI's bootstrap token file (`bootstrap-token`), or undefined when the PKI has none (it is
 * optional). One that is there must be its owner's only and hold one token.
 * @throws MoltError `MOLT_KUBE_PKI_INVALID`
 */
export async function bootstrapTokenIn(dir: string): Promise<string | undefined> {
  const path = join(dir, BootstrapTokenFile);
  const s = await stat(path).catch(() => undefined);
  if (s === undefined) return undefined;
  if (!s.isFile()) throw invalid(path, 'is not a file');
  if ((s.mode & 0o077) !== 0)
    throw new MoltError(
      ErrorCode.KubePkiInvalid,
      `${path}: holds the cluster's bootstrap token and is open to group or others (mode ${(s.mode & 0o777).toString(8).padStart(4, '0')})`,
      { hint: `chmod 600 ${path}` },
    );
  if (!BootstrapTokenPattern.test((await readFile(path, 'utf8')).trim()))
    throw invalid(path, 'does not hold a bootstrap token <6 of a-z0-9>.<16 of a-z0-9>');
  return path;
}

function invalid(path: string, problem: string, cause?: unknown): MoltError {
  return new MoltError(ErrorCode.KubePkiInvalid, `${path}: ${problem}`, {
    ...(cause !== undefined && { cause }),
    hint: 'make the cluster’s PKI with `molt pki kubernetes --cluster <name> --out <dir>`, and check it with --check',
  });
}

/** Every file is there, and every file that holds a key is its owner's only. */
async function requireFiles(paths: KubernetesPkiPaths): Promise<void> {
  const missing: string[] = [];
  for (const file of Object.keys(paths).filter((k) => k !== 'dir') as KubernetesPkiFile[]) {
    const s = await stat(paths[file]).catch(() => undefined);
    if (s === undefined || !s.isFile()) missing.push(paths[file]);
    else if (privateFiles.includes(file) && (s.mode & 0o077) !== 0)
      throw new MoltError(
        ErrorCode.KubePkiInvalid,
        `${paths[file]}: holds a private key and is open to group or others (mode ${(s.mode & 0o777).toString(8).padStart(4, '0')})`,
        { hint: `chmod 600 ${paths[file]}` },
      );
  }
  if (missing.length > 0)
    throw new MoltError(ErrorCode.KubePkiInvalid, `missing ${missing.join(', ')}`, {
      hint: `${paths.dir} must hold the whole PKI \`molt pki kubernetes\` writes`,
    });
}

async function certificate(path: string, text?: string): Promise<X509Certificate> {
  try {
    return new X509Certificate(text ?? (await readFile(path, 'utf8')));
  } catch (e) {
    throw invalid(path, 'is not a PEM certificate', e);
  }
}

async function privateKey(path: string, text?: string): Promise<KeyObject> {
  try {
    return createPrivateKey(text ?? (await readFile(path, 'utf8')));
  } catch (e) {
    throw invalid(path, 'is not a PEM private key', e);
  }
}

const commonName = (cert: X509Certificate): string | undefined =>
  cert.subject
    .split('\n')
    .find((line) => line.startsWith('CN='))
    ?.slice('CN='.length);

/** A certificate and its key, as read from their files (or a kubeconfig). */
interface Held {
  readonly path: string;
  readonly cert: X509Certificate;
  readonly key: KeyObject;
  /** How the key is named in a message: its file, or the kubeconfig's field. */
  readonly keyName: string;
  readonly now: Date;
}

/** A CA of the cluster: self-signed, a CA, valid now, naming the cluster, matching its key. */
async function authority(
  paths: KubernetesPkiPaths,
  which: 'ca' | 'frontProxyCa',
  expected: string,
  now: Date,
): Promise<X509Certificate> {
  const [path, keyPath] = [paths[`${which}Cert` as const], paths[`${which}Key` as const]];
  const cert = await certificate(path);
  if (!cert.ca) throw invalid(path, 'is not a CA certificate (basicConstraints cA is false)');
  const name = commonName(cert);
  if (name !== expected) {
    const prefix = expected.slice(0, expected.lastIndexOf(' ') + 1);
    const other =
      name?.startsWith(prefix) === true
        ? `the cluster ${name.slice(prefix.length)}`
        : `CN=${String(name)}`;
    throw invalid(path, `is the CA of ${other}, not of this cluster (expected CN=${expected})`);
  }
  const held = { path, cert, key: await privateKey(keyPath), keyName: keyPath, now };
  checkValidity(held);
  if (!cert.checkIssued(cert) || !cert.verify(cert.publicKey))
    throw invalid(path, 'is not self-signed');
  checkKey(held);
  return cert;
}

function checkLeaf(held: Held, ca: X509Certificate, expected: string): void {
  checkValidity(held);
  if (!held.cert.checkIssued(ca) || !held.cert.verify(ca.publicKey))
    throw invalid(held.path, `is not signed by the CA ${commonName(ca) ?? ''}`);
  checkKey(held);
  const name = commonName(held.cert);
  if (name !== expected)
    throw invalid(held.path, `is the certificate of ${String(name)}, expected CN=${expected}`);
}

function checkValidity({ path, cert, now }: Held): void {
  if (now < cert.validFromDate)
    throw invalid(path, `is not yet valid (valid from ${cert.validFromDate.toISOString()})`);
  if (now > cert.validToDate)
    throw invalid(path, `has expired (on ${cert.validToDate.toISOString()})`);
}

function checkKey({ path, cert, key, keyName }: Held): void {
  if (!cert.checkPrivateKey(key)) throw invalid(path, `does not match ${keyName}`);
}

/** The fields of a kubeconfig with embedded credentials that the check reads. */
const Kubeconfig = z.object({
  'current-context': z.string(),
  contexts: z.array(
    z.object({ name: z.string(), context: z.object({ cluster: z.string(), user: z.string() }) }),
  ),
  clusters: z.array(
    z.object({ name: z.string(), cluster: z.object({ 'certificate-authority-data': z.string() }) }),
  ),
  users: z.array(
    z.object({
      name: z.string(),
      user: z.object({ 'client-certificate-data': z.string(), 'client-key-data': z.string() }),
    }),
  ),
});

async function checkKubeconfig(
  path: string,
  ca: X509Certificate,
  expected: string,
  now: Date,
): Promise<void> {
  const parsed = Kubeconfig.safeParse(parseYaml(await readFile(path, 'utf8')));
  if (!parsed.success)
    throw invalid(path, 'is not a kubeconfig with embedded certificates', parsed.error);
  const k = parsed.data;
  const context = k.contexts.find((c) => c.name === k['current-context'])?.context;
  const cluster = k.clusters.find((c) => c.name === context?.cluster)?.cluster;
  const user = k.users.find((u) => u.name === context?.user)?.user;
  if (cluster === undefined || user === undefined)
    throw invalid(path, 'its current context names no cluster or no user');
  const text = (b64: string) => Buffer.from(b64, 'base64').toString('utf8');
  const trusted = await certificate(path, text(cluster['certificate-authority-data']));
  if (!trusted.raw.equals(ca.raw))
    throw invalid(path, `trusts the CA ${commonName(trusted) ?? '?'}, not this cluster’s ca.crt`);
  const cert = await certificate(path, text(user['client-certificate-data']));
  const key = await privateKey(path, text(user['client-key-data']));
  checkLeaf({ path, cert, key, keyName: 'its client-key-data', now }, ca, expected);
}

function parseYaml(text: string): unknown {
  try {
    return parse(text);
  } catch {
    return undefined;
  }
}

async function checkServiceAccount(paths: KubernetesPkiPaths): Promise<void> {
  const key = await privateKey(paths.saKey);
  const text = await readFile(paths.saPub, 'utf8');
  let pub: KeyObject;
  try {
    // createPublicKey would also take a private key, which has no place in a public file.
    if (!text.includes('-----BEGIN PUBLIC KEY-----')) throw new Error('no PUBLIC KEY block');
    pub = createPublicKey(text);
  } catch (e) {
    throw invalid(paths.saPub, 'is not a PEM public key', e);
  }
  const der = (k: KeyObject) => k.export({ type: 'spki', format: 'der' });
  if (!der(createPublicKey(key)).equals(der(pub)))
    throw invalid(paths.saPub, `is not the public key of ${paths.saKey}`);
}
