// SPDX-License-Identifier: Apache-2.0
/**
 * The fleet's certificates (docs/adr/0004 §6), made with `@peculiar/x509` on Node's WebCrypto:
 * an EC P-256 CA and leaf certificates whose subject carries the identity, `CN=<name>,
 * O=molt:<role>`. Only `molt pki` loads this module; the agent checks peers with `node:tls` alone.
 */
import { webcrypto } from 'node:crypto';
import { isIP } from 'node:net';
// @peculiar/x509 depends on tsyringe, which needs the Reflect metadata API at import time.
import 'reflect-metadata';
import * as x509 from '@peculiar/x509';
import { RoleOrganisationPrefix, type Role } from '../../protocol/index.ts';

const crypto = webcrypto;
// x509 types its provider with the DOM's Crypto; Node's webcrypto is that API.
x509.cryptoProvider.set(crypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);

const ecdsa = { name: 'ECDSA', namedCurve: 'P-256' } as const;
const signingAlgorithm = { name: 'ECDSA', hash: 'SHA-256' } as const;
const dayMs = 86_400_000;

/** A certificate and its private key, both PEM (the key PKCS#8, `BEGIN PRIVATE KEY`). */
export interface PemPair {
  readonly cert: string;
  readonly key: string;
}

/** Options of {@link createCa}. */
export interface CaOptions {
  /** @default 'molt fleet CA' */
  readonly name?: string;
  /** @default 3650 (10 years) */
  readonly days?: number;
  /** Start of validity; tests back-date it. @default now */
  readonly now?: Date;
}

/** A new fleet CA: EC P-256, self-signed, `cA: true` with path length 0. */
export async function createCa(options: CaOptions = {}): Promise<PemPair> {
  const keys = await crypto.subtle.generateKey(ecdsa, true, ['sign', 'verify']);
  const { notBefore, notAfter } = validity(options.now, options.days ?? 3650);
  const name = [{ CN: [options.name ?? 'molt fleet CA'] }, { O: ['molt'] }];
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serialNumber(),
    name,
    notBefore,
    notAfter,
    signingAlgorithm,
    keys,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(
        x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign,
        true,
      ),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return { cert: cert.toString('pem') + '\n', key: await exportKey(keys.privateKey) };
}

/** Options of {@link issueCertificate}. */
export interface IssueOptions {
  readonly ca: PemPair;
  readonly role: Role;
  readonly name: string;
  /** Extra subject alternative names: IP addresses or DNS names (told apart by their form). */
  readonly sans?: readonly string[];
  /** @default 365 */
  readonly days?: number;
  /** Start of validity; tests back-date it to make expired certificates. @default now */
  readonly now?: Date;
}

/**
 * A leaf certificate signed by the CA, usable as TLS server and client (an agent serves and, as
 * `node`, calls other agents). Node certificates also name `localhost`, `127.0.0.1` and, when it
 * is a host name, their own name, so a lab agent on loopback verifies without extra flags.
 */
export async function issueCertificate(o: IssueOptions): Promise<PemPair> {
  const caCert = new x509.X509Certificate(o.ca.cert);
  const caKey = await importKey(o.ca.key);
  const keys = await crypto.subtle.generateKey(ecdsa, true, ['sign', 'verify']);
  const { notBefore, notAfter } = validity(o.now, o.days ?? 365);
  const names = subjectAltNames(o);
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: serialNumber(),
    subject: [{ CN: [o.name] }, { O: [`${RoleOrganisationPrefix}${o.role}`] }],
    issuer: caCert.subjectName,
    notBefore,
    notAfter,
    signingAlgorithm,
    publicKey: keys.publicKey,
    signingKey: caKey,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      // Only node certificates may serve: an operator or admin certificate (client only) cannot be
      // used to impersonate an agent to the CLI, whatever SANs it carries.
      new x509.ExtendedKeyUsageExtension(
        o.role === 'node'
          ? [x509.ExtendedKeyUsage.serverAuth, x509.ExtendedKeyUsage.clientAuth]
          : [x509.ExtendedKeyUsage.clientAuth],
      ),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
      await x509.AuthorityKeyIdentifierExtension.create(caCert),
      ...(names.length > 0 ? [new x509.SubjectAlternativeNameExtension(names)] : []),
    ],
  });
  return { cert: cert.toString('pem') + '\n', key: await exportKey(keys.privateKey) };
}

/** A host name as DNS SANs accept it (RFC 1123 labels). */
const hostName =
  /^(?=.{1,253}$)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/i;

function subjectAltNames(o: IssueOptions): x509.JsonGeneralName[] {
  const values = [...(o.sans ?? [])];
  if (o.role === 'node')
    values.push(...(hostName.test(o.name) ? [o.name] : []), 'localhost', '127.0.0.1');
  const unique = [...new Set(values)];
  return unique.map((value) => ({ type: isIP(value) === 0 ? 'dns' : 'ip', value }));
}

/** True when `value` can be a subject alternative name: an IP address or a host name. */
export function isValidSan(value: string): boolean {
  return isIP(value) !== 0 || hostName.test(value);
}

function validity(now: Date | undefined, days: number): { notBefore: Date; notAfter: Date } {
  const start = now ?? new Date();
  // A minute of slack: a freshly issued certificate must not be "not yet valid" on a peer whose
  // clock is a few seconds behind.
  return {
    notBefore: new Date(start.getTime() - 60_000),
    notAfter: new Date(start.getTime() + days * dayMs),
  };
}

/** 16 random bytes, positive (high bit clear), as RFC 5280 asks of serial numbers. */
function serialNumber(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  bytes[0] = ((bytes[0] ?? 0) & 0x7f) | 0x01;
  return Buffer.from(bytes).toString('hex');
}

async function exportKey(key: webcrypto.CryptoKey): Promise<string> {
  const der = await crypto.subtle.exportKey('pkcs8', key);
  return x509.PemConverter.encode(der, 'PRIVATE KEY') + '\n';
}

/** Import a PKCS#8 PEM EC P-256 key for signing. */
export async function importKey(pem: string): Promise<webcrypto.CryptoKey> {
  const der = x509.PemConverter.decodeFirst(pem);
  return crypto.subtle.importKey('pkcs8', der, ecdsa, false, ['sign']);
}
