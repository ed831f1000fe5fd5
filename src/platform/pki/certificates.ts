// SPDX-License-Identifier: Apache-2.0
/**
 * The fleet's certificates (docs/adr/0004 §6), made with `@peculiar/x509` on Node's WebCrypto:
 * an EC P-256 CA and leaf certificates whose subject carries the identity, `CN=<name>,
 * O=molt:<role>`. {@link issueLeaf} makes any other leaf (a Kubernetes cluster's PKI,
 * `kubernetes.ts`: its own subjects and usages). Only `molt pki` loads this module; the agent
 * checks peers with `node:tls` alone.
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
  return issueLeaf({
    ca: o.ca,
    commonName: o.name,
    organisations: [`${RoleOrganisationPrefix}${o.role}`],
    // Only node certificates may serve: an operator or admin certificate (client only) cannot be
    // used to impersonate an agent to the CLI, whatever SANs it carries.
    usages: o.role === 'node' ? ['serverAuth', 'clientAuth'] : ['clientAuth'],
    sans: subjectAltNames(o),
    days: o.days ?? 365,
    ...(o.now && { now: o.now }),
  });
}

/** What a leaf certificate may be used for (its extended key usages). */
export type LeafUsage = 'serverAuth' | 'clientAuth';

/** A subject alternative name, typed: a DNS name or an IP address. */
export interface SubjectAltName {
  readonly type: 'dns' | 'ip';
  readonly value: string;
}

/** Options of {@link issueLeaf}. */
export interface LeafOptions {
  readonly ca: PemPair;
  readonly commonName: string;
  /** Subject `O` values, one RDN each (Kubernetes reads a client's groups from them). */
  readonly organisations?: readonly string[];
  readonly usages: readonly LeafUsage[];
  readonly sans?: readonly SubjectAltName[];
  readonly days: number;
  /** Start of validity; tests back-date it. @default now */
  readonly now?: Date;
}

/** An EC P-256 leaf certificate signed by the CA, with the subject, usages and names given. */
export async function issueLeaf(o: LeafOptions): Promise<PemPair> {
  const caCert = new x509.X509Certificate(o.ca.cert);
  const caKey = await importKey(o.ca.key);
  const keys = await crypto.subtle.generateKey(ecdsa, true, ['sign', 'verify']);
  const { notBefore, notAfter } = validity(o.now, o.days);
  const names = [...new Map((o.sans ?? []).map((n) => [`${n.type}:${n.value}`, n])).values()];
  const usages = {
    serverAuth: x509.ExtendedKeyUsage.serverAuth,
    clientAuth: x509.ExtendedKeyUsage.clientAuth,
  };
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: serialNumber(),
    subject: [{ CN: [o.commonName] }, ...(o.organisations ?? []).map((org) => ({ O: [org] }))],
    issuer: caCert.subjectName,
    notBefore,
    notAfter,
    signingAlgorithm,
    publicKey: keys.publicKey,
    signingKey: caKey,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension(o.usages.map((u) => usages[u])),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
      await x509.AuthorityKeyIdentifierExtension.create(caCert),
      ...(names.length > 0
        ? [new x509.SubjectAlternativeNameExtension(names.map((n) => ({ ...n })))]
        : []),
    ],
  });
  return { cert: cert.toString('pem') + '\n', key: await exportKey(keys.privateKey) };
}

/** A signing key pair that is no certificate (a service-account issuer's): PKCS#8 and SPKI PEM. */
export async function createKeyPair(): Promise<{ key: string; pub: string }> {
  const keys = await crypto.subtle.generateKey(ecdsa, true, ['sign', 'verify']);
  const spki = await crypto.subtle.exportKey('spki', keys.publicKey);
  return {
    key: await exportKey(keys.privateKey),
    pub: x509.PemConverter.encode(spki, 'PUBLIC KEY') + '\n',
  };
}

/** A host name as DNS SANs accept it (RFC 1123 labels). */
const hostName =
  /^(?=.{1,253}$)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/i;

function subjectAltNames(o: IssueOptions): SubjectAltName[] {
  const values = [...(o.sans ?? [])];
  if (o.role === 'node')
    values.push(...(hostName.test(o.name) ? [o.name] : []), 'localhost', '127.0.0.1');
  const unique = [...new Set(values)];
  return unique.map((value) => ({ type: isIP(value) === 0 ? 'dns' : 'ip', value }));
}

/** True when `value` is a host name (RFC 1123 labels), as a DNS SAN or a DNS domain must be. */
export const isHostName = (value: string): boolean => hostName.test(value);

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
