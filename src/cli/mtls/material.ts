// SPDX-License-Identifier: Apache-2.0
/**
 * The client's PEM material, read from the files the flags name and checked before any connection:
 * an expired, not-yet-valid or foreign certificate, or a key that does not match it, would be
 * refused by the daemon's handshake anyway, and refused here it gets a message that says why.
 */
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { readPem } from '../../platform/pki/read-pem.ts';
import { ErrorCode, MoltError } from '../../protocol/index.ts';
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

/** Read the files and refuse, before any connection, what `peer` would refuse anyway. */
export async function loadMaterial(o: MaterialPaths, peer: DaemonPeer): Promise<TlsMaterial> {
  const ca = o.ca === undefined ? undefined : await readPem(o.ca, 'CA bundle');
  const cas = ca === undefined ? [] : pemBlocks(ca).map((p) => parseCert(p, o.ca ?? ''));
  if (ca !== undefined && cas.length === 0)
    throw new MoltError(ErrorCode.PkiInvalid, `${o.ca ?? ''} holds no PEM certificate`);
  if (o.cert === undefined || o.key === undefined) return { ...(ca !== undefined && { ca }) };
  const cert = await readPem(o.cert, 'certificate');
  const key = await readPem(o.key, 'private key');
  checkClientCertificate(peer, {
    certPath: o.cert,
    cert: parseCert(cert, o.cert),
    key,
    keyPath: o.key,
    cas,
    caPath: o.ca,
  });
  return { cert, key, ...(ca !== undefined && { ca }) };
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
  readonly caPath: string | undefined;
}

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
  if (
    c.cas.length > 0 &&
    !c.cas.some((ca) => c.cert.checkIssued(ca) && c.cert.verify(ca.publicKey))
  ) {
    throw new MoltError(
      ErrorCode.TlsRejected,
      `client certificate ${c.certPath} was not issued by the CA in ${c.caPath ?? ''} (a foreign certificate); the ${peer.name} would refuse it`,
      { hint: reissue },
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
