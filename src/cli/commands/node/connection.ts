// SPDX-License-Identifier: Apache-2.0
/**
 * How `molt node` reaches an agent: the shared mTLS connection (`mtls/connect.ts`) at `--endpoint`
 * (MOLT_ENDPOINT), or at the endpoint the operator's inventory lists for a machine named on the
 * command line (`molt node status cp-1`; `by-name.ts`).
 */
import { createAgentClient, type AgentClient } from '../../../protocol/index.ts';
import { connectMtls, withConnection, type DaemonConnection } from '../../mtls/connect.ts';
import { AgentPeer } from '../../mtls/peer.ts';
import type { CliEnv } from '../../flags.ts';
import type { CommandContext } from '../../context.ts';
import { agentEndpointOf } from './by-name.ts';

/** A ready agent client and how to print. */
export type NodeConnection = DaemonConnection<AgentClient>;

/** Validate the connection flags (environment, then context, fill what flags omit) and open a client. */
export async function connectToAgent(
  raw: Record<string, unknown>,
  env: CliEnv,
): Promise<NodeConnection> {
  const machine = raw['machine'];
  const endpoint =
    typeof machine === 'string' ? await agentEndpointOf(machine, raw, env) : undefined;
  return connectMtls(
    endpoint === undefined ? raw : { ...raw, endpoint },
    env,
    AgentPeer,
    createAgentClient,
  );
}

/** Run `run` over a connection made from the command's flags, closed afterwards. */
export const withAgent = (
  ctx: CommandContext,
  raw: Record<string, unknown>,
  run: (c: NodeConnection) => Promise<void>,
): Promise<void> => withConnection(connectToAgent(raw, ctx.io.env), run);
