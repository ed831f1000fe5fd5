// SPDX-License-Identifier: Apache-2.0
/** How `molt node` reaches an agent: the shared mTLS connection (`mtls/connect.ts`), MOLT_ENDPOINT. */
import { createAgentClient, type AgentClient } from '../../../protocol/index.ts';
import { connectMtls, withConnection, type DaemonConnection } from '../../mtls/connect.ts';
import { AgentPeer } from '../../mtls/peer.ts';
import type { CliEnv } from '../../flags.ts';
import type { CommandContext } from '../../context.ts';

/** A ready agent client and how to print. */
export type NodeConnection = DaemonConnection<AgentClient>;

/** Validate the connection flags (environment fills what flags omit) and open a client. */
export function connectToAgent(raw: Record<string, unknown>, env: CliEnv): Promise<NodeConnection> {
  return connectMtls(raw, env, AgentPeer, createAgentClient);
}

/** Run `run` over a connection made from the command's flags, closed afterwards. */
export const withAgent = (
  ctx: CommandContext,
  raw: Record<string, unknown>,
  run: (c: NodeConnection) => Promise<void>,
): Promise<void> => withConnection(connectToAgent(raw, ctx.io.env), run);
