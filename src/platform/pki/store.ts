// SPDX-License-Identifier: Apache-2.0
/**
 * The fleet CA directory and issued certificate files: `ca.pem`, `ca.key` (0600), `<name>.pem`,
 * `<name>.key` (0600). Nothing is ever overwritten: a second `init` would orphan every certificate
 * the first CA signed.
 */
import { X509Certificate } from 'node:crypto';
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ErrorCode, MoltError, type Role } from '../../protocol/index.ts';
import { createCa, issueCertificate, type PemPair } from './certificates.ts';
import { errorMessage } from '../../core/errors.ts';

/** What was written, for the command's output. */
export interface WrittenCertificate {
  readonly cert: string;
  readonly key: string;
  readonly subject: string;
  readonly notAfter: string;
  readonly fingerprint256: string;
  readonly subjectAltNames: string | null;
}

/** Create a new CA in `dir` (created if missing); refuses when `ca.pem` or `ca.key` exists. */
export async function initCaDir(
  dir: string,
  options: { now?: Date; days?: number } = {},
): Promise<WrittenCertificate> {
  const files = { cert: join(dir, 'ca.pem'), key: join(dir, 'ca.key') };
  await refuseExisting(files, 'a CA', `remove ${dir} first, or choose another --dir`);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const pair = await createCa(options);
  await writePair(files, pair);
  return describe(files, pair.cert);
}

/** Options of {@link issueToDir}. */
export interface IssueToDirOptions {
  readonly caDir: string;
  readonly outDir: string;
  readonly role: Role;
  readonly name: string;
  readonly sans: readonly string[];
  readonly days: number;
  readonly now?: Date;
}

/** Issue `<outDir>/<name>.pem` and `<name>.key` signed by the CA in `caDir`. */
export async function issueToDir(o: IssueToDirOptions): Promise<WrittenCertificate> {
  const ca = await loadCa(o.caDir);
  const files = { cert: join(o.outDir, `${o.name}.pem`), key: join(o.outDir, `${o.name}.key`) };
  await refuseExisting(
    files,
    `a certificate for ${o.name}`,
    'choose another --name or --out, or remove the old files',
  );
  await mkdir(o.outDir, { recursive: true, mode: 0o700 });
  const pair = await issueCertificate({
    ca,
    role: o.role,
    name: o.name,
    sans: o.sans,
    days: o.days,
    ...(o.now && { now: o.now }),
  });
  await writePair(files, pair);
  return describe(files, pair.cert);
}

/** Read the CA pair of `dir`; missing or malformed files raise MOLT_PKI_INVALID. */
export async function loadCa(dir: string): Promise<PemPair> {
  const cert = await readPem(join(dir, 'ca.pem'), 'CERTIFICATE');
  const key = await readPem(join(dir, 'ca.key'), 'PRIVATE KEY');
  try {
    if (!new X509Certificate(cert).ca)
      throw new Error('not a CA certificate (basicConstraints cA is false)');
  } catch (e) {
    throw new MoltError(ErrorCode.PkiInvalid, `${join(dir, 'ca.pem')}: ${errorMessage(e)}`, {
      cause: e,
    });
  }
  return { cert, key };
}

/** Read a PEM file that must contain a block of `label`; anything else is MOLT_PKI_INVALID. */
export async function readPem(path: string, label: string): Promise<string> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    throw new MoltError(
      ErrorCode.PkiInvalid,
      `cannot read ${path}: ${(e as NodeJS.ErrnoException).code ?? String(e)}`,
      {
        cause: e,
        hint: 'check the path; `molt pki init` and `molt pki issue` create these files',
      },
    );
  }
  if (!text.includes(`-----BEGIN ${label}-----`)) {
    throw new MoltError(
      ErrorCode.PkiInvalid,
      `${path} is not a PEM ${label.toLowerCase()} (expected -----BEGIN ${label}-----)`,
    );
  }
  return text;
}

async function refuseExisting(
  files: { cert: string; key: string },
  what: string,
  hint: string,
): Promise<void> {
  for (const path of [files.cert, files.key]) {
    const exists = await stat(path).then(
      () => true,
      () => false,
    );
    if (exists)
      throw new MoltError(
        ErrorCode.PkiInvalid,
        `${path} already exists; molt never overwrites ${what}`,
        { hint },
      );
  }
}

async function writePair(files: { cert: string; key: string }, pair: PemPair): Promise<void> {
  // `wx`: fail rather than replace a file that appeared since the check.
  await writeFile(files.key, pair.key, { mode: 0o600, flag: 'wx' });
  await writeFile(files.cert, pair.cert, { mode: 0o644, flag: 'wx' });
}

function describe(files: { cert: string; key: string }, pem: string): WrittenCertificate {
  const x = new X509Certificate(pem);
  return {
    cert: files.cert,
    key: files.key,
    subject: x.subject.replaceAll('\n', ', '),
    notAfter: x.validToDate.toISOString(),
    fingerprint256: x.fingerprint256,
    subjectAltNames: x.subjectAltName ?? null,
  };
}
