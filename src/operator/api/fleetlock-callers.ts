// SPDX-License-Identifier: Apache-2.0
/**
 * Who may speak for which FleetLock id. The protocol has no authentication: the id is
 * whatever the body says, so anybody reaching a listener could release another node's slot (and
 * let a second node reboot while the first is still down) or take slots for made-up ids. Each
 * listener binds ids to its callers instead:
 *
 * - **mTLS API** ({@link certificateBinding}): a node or operator certificate speaks only for the
 *   id that is its own name (CN), and only in the group of its own pool (a machine of the fleet);
 *   an admin certificate speaks for any id in any group — the manual way to free a slot.
 * - **Anonymous listener** ({@link clientBinding}): only the ids the operator lists in
 *   `fleetLock.clients` (each with its group), so a made-up id takes nothing; a client listed with
 *   a token hash must present the token, as `Authorization: Bearer <token>` or, for Zincati (which
 *   sends nothing but the body and the protocol header), in its `base_url`:
 *   `https://<host>:<port>/fleetlock/token/<token>/`. A listed id without a token is bound only by
 *   being listed: whoever knows it (Zincati's is derived from `/etc/machine-id`) may use it.
 */
import type { FastifyRequest } from 'fastify';
import { tokenMatches } from '../../platform/pki/tokens.ts';
import type { Identity } from '../../platform/https/identity.ts';
import type { FleetLockOptions, FleetLockParams } from './fleetlock.ts';

type Bind = NonNullable<FleetLockOptions['bind']>;

/** A machine as the binding needs it: its name and pool (= its FleetLock group). */
interface Member {
  readonly id: string;
  readonly pool: string;
}

/** Ids bound to client certificates (the mTLS API). */
export function certificateBinding(
  identityOf: (request: FastifyRequest) => Identity,
  machines: () => Promise<readonly Member[]>,
): Bind {
  return async (request, params) => {
    const who = identityOf(request);
    if (who.role === 'admin') return undefined;
    if (who.name !== params.id)
      return `${who.name} may take or release only its own slot (id ${who.name}), not ${params.id}'s`;
    const member = (await machines()).find((m) => m.id === params.id);
    if (member?.pool !== params.group)
      return member === undefined
        ? `${params.id} is not a machine of this fleet`
        : `${params.id} belongs to group ${member.pool}, not ${params.group}`;
    return undefined;
  };
}

/** One id the anonymous listener serves (`fleetLock.clients` of the operator config). */
export interface FleetLockClient {
  readonly id: string;
  readonly group: string;
  /** Lower-case hex SHA-256 of the client's token; absent: the id alone binds. */
  readonly tokenSha256?: string | undefined;
}

/** The token a request presents: `Authorization: Bearer`, else the `/token/<token>/` path. */
function presentedToken(request: FastifyRequest): string | undefined {
  const header = /^Bearer\s+(\S+)$/i.exec(request.headers.authorization ?? '')?.[1];
  if (header !== undefined) return header;
  const fromPath = (request.params as { token?: unknown } | undefined)?.token;
  return typeof fromPath === 'string' && fromPath !== '' ? fromPath : undefined;
}

/** Ids bound to the operator's allow-list, and to tokens where it names one (anonymous listener). */
export function clientBinding(clients: readonly FleetLockClient[]): Bind {
  const byId = new Map(clients.map((c) => [c.id, c]));
  return (request, params: FleetLockParams) => {
    const client = byId.get(params.id);
    if (client === undefined)
      return `id ${params.id} is not a FleetLock client of this operator (fleetLock.clients)`;
    if (client.group !== params.group)
      return `id ${params.id} may use group ${client.group}, not ${params.group}`;
    if (
      client.tokenSha256 !== undefined &&
      !tokenMatches(presentedToken(request), client.tokenSha256)
    )
      return `id ${params.id} needs its token (Authorization: Bearer, or /fleetlock/token/<token>/)`;
    return undefined;
  };
}
