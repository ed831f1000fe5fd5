// SPDX-License-Identifier: Apache-2.0
/**
 * The client's PEM material, read from the files the flags name and checked before any connection:
 * an expired, not-yet-valid or foreign certificate, or a key that does not match it, would be
 * refused by the daemon's handshake anyway, and refused here it gets a message that says why.
 */
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { readPem } from '../../platform/pki/read-pem.ts';
import { ErrorCode, MoltError } from '../../protocol/index.ts';
import { mismatchError, probeServerTrust } from './ca-mismatch.ts';
import type { DaemonPeer } from './peer.ts';
import type { TlsMaterial } from './tls-probe.ts';

/** The files, by flag; cert and key come together or not at all (checked by the caller). */
export interface MaterialPaths {
  readonly cert?: string | undefined;
  readonly key?: string | undefined;
  readonly ca?: string | undefined;
}

/** PEM blocks of a bundle. */
const pemBlocks = (text: string): string[] =>
  text.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];

/**
 * Read the files and refuse, before any request, what `peer` at `url` would refuse anyway. A
 * client certificate `--ca` did not issue costs one handshake, to tell a foreign certificate from
 * a CA file of another fleet (ca-mismatch.ts).
 */
export async function loadMaterial(
  o: MaterialPaths,
  peer: DaemonPeer,
  url: URL,
): Promise<TlsMaterial> {
  const { ca, cas } = await readCaBundle(o.ca);
  if (o.cert === undefined || o.key === undefined) return { ...(ca !== undefined && { ca }) };
  const cert = await readPem(o.cert, 'certificate');
  const key = await readPem(o.key, 'private key');
  const check = { certPath: o.cert, cert: parseCert(cert, o.cert), key, keyPath: o.key, cas };
  checkClientCertificate(peer, check);
  const tls = { cert, key, ...(ca !== undefined && { ca }) };
  if (o.ca !== undefined && !issuedByOneOf(check.cert, cas)) {
    const trust = await probeServerTrust(url, tls);
    throw mismatchError({ peer, url, certPath: o.cert, caPath: o.ca }, trust);
  }
  return tls;
}

async function readCaBundle(
  path: string | undefined,
): Promise<{ ca?: string; cas: X509Certificate[] }> {
  if (path === undefined) return { cas: [] };
  const ca = await readPem(path, 'CA bundle');
  const cas = pemBlocks(ca).map((p) => parseCert(p, path));
  if (cas.length === 0)
    throw new MoltError(ErrorCode.PkiInvalid, `${path} holds no PEM certificate`);
  return { ca, cas };
}

function parseCert(pem: string, path: string): X509Certificate {
  try {
    return new X509Certificate(pem);
  } catch (e) {
    throw new MoltError(ErrorCode.PkiInvalid, `${path} is not a PEM certificate`, { cause: e });
  }
}

interface ClientCheck {
  readonly certPath: string;
  readonly cert: X509Certificate;
  readonly key: string;
  readonly keyPath: string;
  readonly cas: readonly X509Certificate[];
}

const issuedByOneOf = (cert: X509Certificate, cas: readonly X509Certificate[]): boolean =>
  cas.some((ca) => cert.checkIssued(ca) && cert.verify(ca.publicKey));

function checkClientCertificate(peer: DaemonPeer, c: ClientCheck): void {
  const now = new Date();
  const reissue =
    'issue a new one with `molt pki issue --ca-dir <fleet CA> --role operator --name <you>`';
  if (c.cert.validToDate < now) {
    throw new MoltError(
      ErrorCode.TlsRejected,
      `client certificate ${c.certPath} expired on ${c.cert.validToDate.toISOString()}; the ${peer.name} would refuse it`,
      { hint: reissue },
    );
  }
  if (c.cert.validFromDate > now) {
    throw new MoltError(
      ErrorCode.TlsRejected,
      `client certificate ${c.certPath} is not valid before ${c.cert.validFromDate.toISOString()}`,
      { hint: 'check this machine’s clock' },
    );
  }
  let matches: boolean;
  try {
    matches = c.cert.checkPrivateKey(createPrivateKey(c.key));
  } catch (e) {
    throw new MoltError(ErrorCode.PkiInvalid, `${c.keyPath} is not a PEM private key`, {
      cause: e,
    });
  }
  if (!matches)
    throw new MoltError(
      ErrorCode.PkiInvalid,
      `${c.keyPath} is not the private key of ${c.certPath}`,
    );
}
