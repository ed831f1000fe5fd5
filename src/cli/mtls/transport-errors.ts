// SPDX-License-Identifier: Apache-2.0
/** node:https / node:tls failures → MOLT_TLS_REJECTED or the daemon's `…_UNREACHABLE`. */
import { ErrorCode, MoltError, connectFailure } from '../../protocol/index.ts';
import type { DaemonPeer } from './peer.ts';
import { probeTls, type TlsMaterial } from './tls-probe.ts';

/** Codes node:tls uses when the daemon's certificate fails verification on our side. */
const serverCertCodes = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_SIGNATURE_FAILURE',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

/** The daemon's TLS alerts about our certificate (none given, or one it does not accept). */
const clientCertAlerts =
  /^ERR_SSL_(TLSV13_ALERT_CERTIFICATE_REQUIRED|SSLV3_ALERT_BAD_CERTIFICATE|TLSV1_ALERT_UNKNOWN_CA|SSLV3_ALERT_CERTIFICATE_(EXPIRED|REVOKED|UNKNOWN))$/;

/** Failures after which a second handshake can tell a refused certificate from a vanished daemon. */
const ambiguousCodes = new Set(['UND_ERR_SOCKET', 'ECONNRESET', 'EPIPE', 'UND_ERR_CLOSED']);

function errorCode(e: unknown): string | undefined {
  for (let x: unknown = e; x instanceof Error; x = x.cause) {
    const code = (x as { code?: unknown }).code;
    if (typeof code === 'string') return code;
  }
  return undefined;
}

const certificateHint = (peer: DaemonPeer, hasClientCert: boolean): string =>
  hasClientCert
    ? `the ${peer.name} accepts only unexpired certificates issued by its fleet CA (\`molt pki issue\`); check --cert/--key`
    : 'give a client certificate: --cert and --key (or MOLT_CERT and MOLT_KEY), issued with `molt pki issue`';

/** What a failed request was: to whom, with which material (`caPath`: the `--ca` file). */
export interface TransportContext {
  readonly peer: DaemonPeer;
  readonly url: URL;
  readonly tls: TlsMaterial;
  readonly caPath?: string | undefined;
}

/** The daemon's certificate, refused on our side: by whom, and what to do. */
function serverCertificateError(e: unknown, code: string, c: TransportContext): MoltError {
  const where = `the ${c.peer.name} at ${c.url.origin}`;
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID')
    return new MoltError(
      ErrorCode.TlsRejected,
      `${where} presented a certificate that does not name ${c.url.hostname} (${code})`,
      {
        cause: e,
        hint: `use the host name or address the ${c.peer.name}’s certificate names in --endpoint`,
      },
    );
  if (code === 'CERT_HAS_EXPIRED' || code === 'CERT_NOT_YET_VALID')
    return new MoltError(
      ErrorCode.TlsRejected,
      `${where} presented a certificate that is not valid now (${code})`,
      { cause: e, hint: `check this machine’s clock, and the ${c.peer.name}’s certificate` },
    );
  const fleetCa = `use the fleet's CA: --ca (or MOLT_CA) must be the ca.pem that issued the ${c.peer.name}’s certificate (in a lab: leave --ca out, the lab context has it: \`molt config use-context lab\`)`;
  return new MoltError(
    ErrorCode.TlsRejected,
    c.caPath === undefined
      ? `${where} presented a certificate no CA molt was given issued (${code}): molt trusts only the fleet's CA, given with --ca`
      : `${where} presented a certificate the CA in ${c.caPath} did not issue (${code}): that CA is another fleet's`,
    { cause: e, hint: fleetCa },
  );
}

/** The MoltError for a failed request to `c.url`. */
export async function classifyTransport(e: unknown, c: TransportContext): Promise<MoltError> {
  const code = errorCode(e);
  const where = `the ${c.peer.name} at ${c.url.origin}`;
  const hasClientCert = c.tls.cert !== undefined;
  if (code !== undefined && serverCertCodes.has(code)) return serverCertificateError(e, code, c);
  const refusedCertificate = (alert: string | undefined): MoltError => {
    const what = hasClientCert ? 'refused the client certificate' : 'requires a client certificate';
    return new MoltError(
      ErrorCode.TlsRejected,
      `${where} ${what}${alert === undefined ? '' : ` (${alert})`}`,
      { cause: e, hint: certificateHint(c.peer, hasClientCert) },
    );
  };
  if (code !== undefined && clientCertAlerts.test(code)) return refusedCertificate(code);
  if (code !== undefined && /^ERR_SSL_/.test(code)) {
    return new MoltError(ErrorCode.TlsRejected, `${where} refused the TLS handshake (${code})`, {
      cause: e,
      hint: certificateHint(c.peer, hasClientCert),
    });
  }
  if (code !== undefined && ambiguousCodes.has(code)) {
    const probe = await probeTls(c.url, c.tls);
    if (probe.kind === 'rejected') return refusedCertificate(probe.code);
  }
  return new MoltError(c.peer.unreachable, `cannot reach ${where}: ${connectFailure(e).text}`, {
    cause: e,
    retryable: true,
    hint: c.peer.unreachableHint,
  });
}
