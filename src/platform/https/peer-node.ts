// SPDX-License-Identifier: Apache-2.0
/**
 * Who the server on the other end of a client connection is (DESIGN invariant 8: "the operator
 * checks that the agent it reaches is the machine it means"). The fleet CA and the host name
 * prove only that the peer is *some* machine of the fleet at that address; an endpoint registered
 * for `w-1` that leads to `m1`'s agent passes both. {@link expectNodeCertificate} adds the check
 * that the server's certificate is a node certificate named after the machine the caller means
 * (`CN=<machine id>, O=molt:node`), run by TLS before any request is sent on the connection.
 */
import { checkServerIdentity, type PeerCertificate } from 'node:tls';
import { ErrorCode, isMoltError, MoltError } from '../../core/errors.ts';
import { identityFromSubject } from './identity.ts';

/** A `tls.connect` `checkServerIdentity`: the normal host name check, then the node's name. */
export type ServerIdentityCheck = (host: string, cert: PeerCertificate) => Error | undefined;

/** Who a certificate says it is, for a refusal: `m1 (role node)`, or why it names nobody. */
function presented(cert: PeerCertificate): { name?: string; text: string } {
  try {
    const who = identityFromSubject(cert.subject, 'the operator');
    return who.role === 'node'
      ? { name: who.name, text: `the certificate of ${who.name}` }
      : { text: `a ${who.role} certificate (${who.name}), not a node's` };
  } catch (e) {
    return {
      text: `a certificate naming no molt node (${isMoltError(e) ? e.message : String(e)})`,
    };
  }
}

/**
 * The check for a connection to the agent of machine `machine`: the host name check TLS always
 * does, then the certificate must be `O=molt:node` with `CN=<machine>`. A mismatch is
 * `MOLT_AGENT_IDENTITY` naming both machines (not retryable: the endpoint leads elsewhere).
 */
export function expectNodeCertificate(machine: string, endpoint: string): ServerIdentityCheck {
  return (host, cert) => {
    const hostError = checkServerIdentity(host, cert);
    if (hostError !== undefined) return hostError;
    const peer = presented(cert);
    if (peer.name === machine) return undefined;
    return new MoltError(
      ErrorCode.AgentIdentity,
      `the agent at ${endpoint} presents ${peer.text}, not the certificate of ${machine}: molt does not act on it`,
      {
        hint: `fix the endpoint registered for ${machine}, or issue its agent a certificate with \`molt pki issue --role node --name ${machine}\``,
        details: { machine, endpoint, ...(peer.name !== undefined && { presented: peer.name }) },
      },
    );
  };
}

/** The {@link ErrorCode.AgentIdentity} refusal somewhere in `e`'s cause chain (undici wraps it). */
export function identityRefusal(e: unknown): MoltError | undefined {
  for (let cur: unknown = e, depth = 0; cur instanceof Error && depth < 8; depth++) {
    if (isMoltError(cur, ErrorCode.AgentIdentity)) return cur;
    cur = cur.cause;
  }
  return undefined;
}
