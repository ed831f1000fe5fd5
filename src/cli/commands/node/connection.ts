// SPDX-License-Identifier: Apache-2.0
/** How `molt node` reaches an agent: the shared mTLS connection (`mtls/connect.ts`), MOLT_ENDPOINT. */
import { createAgentClient, type AgentClient } from '../../../protocol/index.ts';
import { connectMtls, type DaemonConnection } from '../../mtls/connect.ts';
import { AgentPeer } from '../../mtls/peer.ts';
import type { CliEnv } from '../../flags.ts';

/** A ready agent client and how to print. */
export type NodeConnection = DaemonConnection<AgentClient>;

/** Validate the connection flags (environment fills what flags omit) and open a client. */
export function connectToAgent(raw: Record<string, unknown>, env: CliEnv): Promise<NodeConnection> {
  return connectMtls(raw, env, AgentPeer, createAgentClient);
}
