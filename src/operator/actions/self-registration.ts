// SPDX-License-Identifier: Apache-2.0
/**
 * Which registrations a node may make of itself (docs/adr/0005, "Registration binds identity";
 * DESIGN invariant 8). A node certificate speaks for its own machine alone, so a node registers
 * only under its own name, only into what one of the operator config's `selfRegistration` rules
 * allows for that name (pool, role, cluster, labels — the fields the planner's limits and
 * control-plane rules read), and only at an endpoint whose agent presents its certificate (the
 * probe, made by the route through the agent gateway). No rule, no self-registration: without
 * this, `w-1` registered m1's endpoint and m1 was upgraded as "w-1" outside its own pool's rules,
 * and a worker could register as a control-plane machine of another cluster and stall its planner.
 */
import { posix } from 'node:path';
import { ErrorCode, isMoltError, MoltError } from '../../core/errors.ts';
import type { Identity } from '../../platform/https/identity.ts';
import type { RegisterMachineBody } from '../../protocol/operator-machines.ts';
import type { SelfRegistrationRule } from '../../protocol/operator-config.ts';
import type { MachineRecord } from '../ports/store.ts';

/** What the API needs to let nodes register themselves. */
export interface SelfRegistration {
  readonly rules: readonly SelfRegistrationRule[];
  /**
   * Reach the agent at the record's endpoint as the operator does; rejects with
   * `MOLT_AGENT_IDENTITY` when it presents another certificate than the record's id.
   */
  readonly probe: (machine: MachineRecord) => Promise<unknown>;
}

const matches = (value: string, globs: readonly string[]): boolean =>
  globs.some((g) => posix.matchesGlob(value, g));

/** Why `body` does not fit `rule` (a list of sentences), empty when it does. */
function misfits(rule: SelfRegistrationRule, body: RegisterMachineBody): string[] {
  const out: string[] = [];
  if (body.pool !== rule.pool) out.push(`pool ${body.pool} (allowed: ${rule.pool})`);
  if (body.role !== rule.role) out.push(`role ${body.role} (allowed: ${rule.role})`);
  if (body.cluster !== rule.cluster)
    out.push(`cluster ${body.cluster ?? '(none)'} (allowed: ${rule.cluster ?? 'none'})`);
  for (const [key, value] of Object.entries(body.labels)) {
    const allowed = rule.labels[key];
    if (allowed === undefined) out.push(`label ${key} (not allowed)`);
    else if (!matches(value, allowed))
      out.push(`label ${key}=${value} (allowed: ${allowed.join(', ')})`);
  }
  return out;
}

/**
 * Throw MOLT_FORBIDDEN unless node `who` may make registration `body`: its own id, and one rule
 * naming it allows every field. The refusal says what was not allowed, for the closest rule.
 */
export function checkSelfRegistration(
  rules: readonly SelfRegistrationRule[],
  who: Identity,
  body: RegisterMachineBody,
): void {
  if (who.name !== body.id)
    throw new MoltError(
      ErrorCode.Forbidden,
      `${who.name} may register only itself, not ${body.id}`,
      {
        hint: 'a machine registers with its own node certificate; an operator may register any machine',
      },
    );
  const mine = rules.filter((r) => matches(who.name, r.nodes));
  if (mine.length === 0)
    throw new MoltError(
      ErrorCode.Forbidden,
      `no selfRegistration rule of the operator lets node ${who.name} register itself`,
      {
        hint: 'an operator or admin registers it (`molt machine register`), or the operator config gets a selfRegistration rule naming it',
      },
    );
  const problems = mine.map((r) => misfits(r, body));
  if (problems.some((p) => p.length === 0)) return;
  const closest = problems.reduce((a, b) => (b.length < a.length ? b : a));
  throw new MoltError(
    ErrorCode.Forbidden,
    `node ${who.name} may not register itself with ${closest.join(', ')}`,
    { hint: 'register within the operator config’s selfRegistration rules, or ask an operator' },
  );
}

/**
 * Ask the agent at `record.endpoint` for its status as the operator's gateway would, so the
 * registration stands only if that agent presents `record.id`'s certificate. A refused identity
 * stays `MOLT_AGENT_IDENTITY` (403); an agent that cannot be asked is `MOLT_AGENT_UNREACHABLE` (502).
 */
export async function probeSelf(s: SelfRegistration, record: MachineRecord): Promise<void> {
  try {
    await s.probe(record);
  } catch (e) {
    if (isMoltError(e, ErrorCode.AgentIdentity)) throw e;
    const why = isMoltError(e) ? `${e.code}: ${e.message}` : String(e);
    throw new MoltError(
      ErrorCode.AgentUnreachable,
      `the operator could not check the certificate of ${record.id}'s agent at ${record.endpoint}: ${why}`,
      { cause: e, retryable: true, hint: 'register once the agent answers at that endpoint' },
    );
  }
}
