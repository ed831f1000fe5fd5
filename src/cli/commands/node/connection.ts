// SPDX-License-Identifier: Apache-2.0
/**
 * How `molt node` reaches an agent: the shared mTLS connection (`mtls/connect.ts`) at `--endpoint`
 * (MOLT_ENDPOINT), or at the endpoint the operator's inventory lists for a machine named on the
 * command line (`molt node status cp-1`; `by-name.ts`).
 */
import { createAgentClient, type AgentClient } from '../../../protocol/index.ts';
import {
  connectMtls,
  withConnection,
  type ClientFactory,
  type DaemonConnection,
} from '../../mtls/connect.ts';
import { AgentPeer, type DaemonPeer } from '../../mtls/peer.ts';
import type { CliEnv } from '../../flags.ts';
import type { CommandContext } from '../../context.ts';
import { agentEndpointOf } from './by-name.ts';

/** A ready agent client and how to print. */
export type NodeConnection = DaemonConnection<AgentClient>;

/** The flags with `endpoint` set from a machine named on the command line. */
async function resolvedFlags(
  raw: Record<string, unknown>,
  env: CliEnv,
): Promise<Record<string, unknown>> {
  const machine = raw['machine'];
  const endpoint =
    typeof machine === 'string' ? await agentEndpointOf(machine, raw, env) : undefined;
  return endpoint === undefined ? raw : { ...raw, endpoint };
}

/** Validate the connection flags (environment, then context, fill what flags omit) and open a client. */
export async function connectToAgent(
  raw: Record<string, unknown>,
  env: CliEnv,
): Promise<NodeConnection> {
  return connectMtls(await resolvedFlags(raw, env), env, AgentPeer, createAgentClient);
}

/** {@link connectToAgent} with another client of the agent (the recovery routes', docs/adr/0012 §6). */
export async function connectToAgentWith<C>(
  raw: Record<string, unknown>,
  env: CliEnv,
  client: ClientFactory<C>,
  peer: DaemonPeer = AgentPeer,
): Promise<DaemonConnection<C>> {
  return connectMtls(await resolvedFlags(raw, env), env, peer, client);
}

/** Run `run` over a connection made from the command's flags, closed afterwards. */
export const withAgent = (
  ctx: CommandContext,
  raw: Record<string, unknown>,
  run: (c: NodeConnection) => Promise<void>,
): Promise<void> => withConnection(connectToAgent(raw, ctx.io.env), run);
