// SPDX-License-Identifier: Apache-2.0
/**
 * Who is calling an mTLS API (the agent's, docs/adr/0004 §6, and the operator's, docs/adr/0005 §5),
 * from the client certificate the TLS layer already verified against the fleet CA (`requestCert` +
 * `rejectUnauthorized`): role from the subject's `O=molt:<role>`, name from CN. One copy for both
 * daemons, so a certificate means the same caller to each of them.
 */
import type { TLSSocket } from 'node:tls';
import { ErrorCode, MoltError } from '../../core/errors.ts';
import { Role, RoleOrganisationPrefix } from '../../protocol/agent.ts';

/** The caller, from its client certificate: `CN=<name>, O=molt:<role>`. */
export interface Identity {
  readonly name: string;
  readonly role: Role;
}

/** A certificate subject as `node:tls` reports it: multi-valued attributes come as arrays. */
export type SubjectFields = Readonly<Record<string, string | readonly string[] | undefined>>;

const roles = new Set<string>(Object.values(Role));
const values = (v: string | readonly string[] | undefined): readonly string[] =>
  v === undefined ? [] : typeof v === 'string' ? [v] : v;

/**
 * The identity a verified certificate subject names; no usable role or name → MOLT_FORBIDDEN.
 * `server` names the API in the refusal ("this agent", "the operator").
 */
export function identityFromSubject(subject: SubjectFields | undefined, server: string): Identity {
  const organisations = values(subject?.['O']).filter((o) => o.startsWith(RoleOrganisationPrefix));
  const roleNames = organisations.map((o) => o.slice(RoleOrganisationPrefix.length));
  const name = values(subject?.['CN'])[0];
  if (roleNames.length !== 1 || !roles.has(roleNames[0] ?? '')) {
    const found = organisations.length === 0 ? 'no O=molt:<role>' : organisations.join(', ');
    throw new MoltError(
      ErrorCode.Forbidden,
      `the client certificate names no molt role ${server} knows (${found})`,
      { hint: 'issue the certificate with `molt pki issue --role node|operator|admin`' },
    );
  }
  if (name === undefined || name === '')
    throw new MoltError(
      ErrorCode.Forbidden,
      'the client certificate has no subject CN (the caller’s name)',
    );
  return { name, role: roleNames[0] as Role };
}

/** The identity of the peer on a TLS socket; an unverified peer (never expected) is MOLT_TLS_REJECTED. */
export function peerIdentity(socket: TLSSocket, server: string): Identity {
  // The TLS layer rejects unverified peers before any request; this guards a misconfiguration.
  if (!socket.authorized)
    throw new MoltError(
      ErrorCode.TlsRejected,
      `client certificate not verified: ${String(socket.authorizationError)}`,
    );
  return identityFromSubject(socket.getPeerCertificate().subject, server);
}

/**
 * Throw MOLT_FORBIDDEN unless `identity`'s role grants `permission` in `granted` (each API has its
 * own table in protocol: `RolePermissions` for the agent, `OperatorRolePermissions`).
 */
export function requirePermission<P extends string>(
  identity: Identity,
  permission: P,
  what: string,
  granted: Readonly<Record<Role, readonly P[]>>,
): void {
  if (granted[identity.role].includes(permission)) return;
  const needed = permission === 'force' ? 'admin' : 'operator or admin';
  // Dashboard users act as `dashboard:<name>` (operator/api/dashboard-auth.ts), without a certificate.
  const holder = identity.name.startsWith('dashboard:') ? 'a dashboard user' : 'a certificate';
  throw new MoltError(
    ErrorCode.Forbidden,
    `${identity.name} (role ${identity.role}) may not ${what}`,
    { hint: `this needs ${holder} with role ${needed}` },
  );
}
