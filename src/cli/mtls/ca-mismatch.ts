// SPDX-License-Identifier: Apache-2.0
/**
 * A client certificate the CA in `--ca` did not issue means one of two things, and they need
 * opposite fixes: the certificate is foreign (issue a new one from this fleet's CA), or the CA file
 * is another fleet's (use this fleet's CA — the certificate is fine). Reporting every such case as
 * a foreign certificate sent people off to reissue a good one. The daemon's own
 * certificate tells them apart: a handshake that checks it against `--ca` without rejecting it.
 */
import { connect } from 'node:tls';
import { isIP } from 'node:net';
import { ErrorCode, MoltError } from '../../protocol/index.ts';
import type { DaemonPeer } from './peer.ts';
import type { TlsMaterial } from './tls-probe.ts';

/** Whether the daemon's certificate chains to the CA given: the answer, or unknown (no handshake). */
export type ServerTrust = 'trusted' | 'untrusted' | 'unknown';

/** Codes of a server certificate its CA bundle did not issue (a host name mismatch is not one). */
const untrustedCodes = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'CERT_SIGNATURE_FAILURE',
]);

/** Handshake with `url` presenting `tls`, and judge the daemon's certificate against `tls.ca`. */
export function probeServerTrust(url: URL, tls: TlsMaterial): Promise<ServerTrust> {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  return new Promise((resolve) => {
    const socket = connect({
      host,
      port: Number(url.port || 443),
      ...(isIP(host) === 0 && { servername: host }),
      ...tls,
      rejectUnauthorized: false,
    });
    const finish = (trust: ServerTrust): void => {
      clearTimeout(timer);
      socket.destroy();
      resolve(trust);
    };
    const timer = setTimeout(() => {
      finish('unknown');
    }, 5_000);
    socket.once('secureConnect', () => {
      // authorizationError is the code (a string at run time) of why `ca` did not verify it.
      const why = String(socket.authorizationError);
      finish(!socket.authorized && untrustedCodes.has(why) ? 'untrusted' : 'trusted');
    });
    socket.once('error', () => {
      finish('unknown');
    });
  });
}

/** What the caller knows of the mismatch. */
export interface Mismatch {
  readonly peer: DaemonPeer;
  readonly url: URL;
  readonly certPath: string;
  readonly caPath: string;
}

/** The error for a client certificate `--ca` did not issue, once `trust` says which side is off. */
export function mismatchError(m: Mismatch, trust: ServerTrust): MoltError {
  const { peer, certPath, caPath } = m;
  const reissue =
    'issue a new one with `molt pki issue --ca-dir <fleet CA> --role operator --name <you>`';
  if (trust === 'trusted')
    return new MoltError(
      ErrorCode.TlsRejected,
      `client certificate ${certPath} was not issued by the CA in ${caPath} (a foreign certificate); the ${peer.name} would refuse it`,
      { hint: reissue },
    );
  if (trust === 'untrusted')
    return new MoltError(
      ErrorCode.TlsRejected,
      `the CA in ${caPath} is not this fleet's: it issued neither the ${peer.name}'s certificate at ${m.url.origin} nor your client certificate ${certPath}`,
      {
        hint: `use the fleet's CA: --ca (or MOLT_CA) must be the ca.pem of the fleet that issued ${certPath} (in a lab: leave --ca out, the lab context has it: \`molt config use-context lab\`)`,
      },
    );
  return new MoltError(
    ErrorCode.TlsRejected,
    `client certificate ${certPath} was not issued by the CA in ${caPath}: one of them is another fleet's`,
    {
      hint: `use the fleet's CA (--ca, MOLT_CA) and a certificate it issued; the ${peer.name} at ${m.url.origin} did not answer to tell which is off`,
    },
  );
}
