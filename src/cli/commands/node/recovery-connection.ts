// SPDX-License-Identifier: Apache-2.0
/**
 * How `molt node service|etcd` and `molt cluster recover` reach an agent's recovery routes
 * (docs/adr/0012 §6): the same mTLS connection and machine names as every `molt node` verb, with
 * the JSON client and the byte-stream client of those routes.
 */
import {
  createKubernetesAgentClient,
  type KubernetesAgentClient,
} from '../../../protocol/agent-kubernetes-client.ts';
import {
  createRecoveryAgentClient,
  type RecoveryAgentClient,
} from '../../../protocol/agent-recovery-client.ts';
import type { CommandContext } from '../../context.ts';
import { withConnection, type ClientFactory, type DaemonConnection } from '../../mtls/connect.ts';
import { AgentPeer } from '../../mtls/peer.ts';
import { connectToAgentWith } from './connection.ts';

/** Both clients of one agent's recovery routes. */
export interface RecoveryClients {
  readonly baseUrl: string;
  readonly kube: KubernetesAgentClient;
  readonly bytes: RecoveryAgentClient;
}

export const recoveryClients: ClientFactory<RecoveryClients> = (o) => ({
  baseUrl: o.baseUrl,
  kube: createKubernetesAgentClient(o),
  bytes: createRecoveryAgentClient(o),
});

export type RecoveryConnection = DaemonConnection<RecoveryClients>;

/** Open the recovery clients from the command's flags (a machine name or `--endpoint`). */
export function connectRecovery(
  ctx: CommandContext,
  raw: Record<string, unknown>,
  o: { quietStreams?: boolean } = {},
): Promise<RecoveryConnection> {
  const peer = o.quietStreams === true ? { ...AgentPeer, quietStreams: true } : AgentPeer;
  return connectToAgentWith(raw, ctx.io.env, recoveryClients, peer);
}

/** Run `run` over a recovery connection made from the command's flags, closed afterwards. */
export const withRecovery = (
  ctx: CommandContext,
  raw: Record<string, unknown>,
  run: (c: RecoveryConnection) => Promise<void>,
  o: { quietStreams?: boolean } = {},
): Promise<void> => withConnection(connectRecovery(ctx, raw, o), run);
