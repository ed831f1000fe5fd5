// SPDX-License-Identifier: Apache-2.0
/**
 * Why did the connection fail? With TLS 1.3 the client finishes its handshake before the server
 * has judged the client certificate, so a rejection reaches undici as "other side closed". Node
 * servers send no alert for an expired or foreign certificate either: they close right after the
 * handshake. A second, bare handshake tells the cases apart: closed (or alerted) at once means the
 * daemon (agent or operator) refused our certificate; still open means TLS is fine and it was just
 * going away.
 */
import { connect } from 'node:tls';
import { isIP } from 'node:net';

/** PEM material for a connection. */
export interface TlsMaterial {
  readonly ca?: string;
  readonly cert?: string;
  readonly key?: string;
}

/** The probe's verdict. */
export type ProbeResult =
  | { readonly kind: 'rejected'; readonly code: string | undefined }
  | { readonly kind: 'accepted' }
  | { readonly kind: 'unreachable'; readonly code: string | undefined };

/** How long an accepted connection must stay open to count as accepted. */
const settleMs = 1_000;

/** Handshake with `url`'s host and port and report whether the daemon keeps the connection. */
export function probeTls(url: URL, tls: TlsMaterial): Promise<ProbeResult> {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  return new Promise((resolve) => {
    let handshaken = false;
    const socket = connect({
      host,
      port: Number(url.port || 443),
      ...(isIP(host) === 0 && { servername: host }),
      ...tls,
    });
    const finish = (result: ProbeResult): void => {
      clearTimeout(timer);
      socket.destroy();
      resolve(result);
    };
    const timer = setTimeout(() => {
      finish(handshaken ? { kind: 'accepted' } : { kind: 'unreachable', code: 'ETIMEDOUT' });
    }, 5_000);
    socket.once('secureConnect', () => {
      handshaken = true;
      setTimeout(() => {
        finish({ kind: 'accepted' });
      }, settleMs).unref();
    });
    socket.once('error', (e: NodeJS.ErrnoException) => {
      const tlsError = handshaken || /^ERR_SSL_|^ERR_TLS_|CERT/.test(e.code ?? '');
      finish(tlsError ? { kind: 'rejected', code: e.code } : { kind: 'unreachable', code: e.code });
    });
    socket.once('close', () => {
      finish(
        handshaken
          ? { kind: 'rejected', code: undefined }
          : { kind: 'unreachable', code: undefined },
      );
    });
  });
}
