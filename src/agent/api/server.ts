// SPDX-License-Identifier: Apache-2.0
/**
 * The agent's HTTPS API with mutual TLS only (docs/adr/0004 §6): a peer without a certificate from
 * the fleet CA, or with an expired one, fails the handshake and never reaches a route.
 */
import {
  listenMtls,
  mtlsIdentity,
  type ListeningApi,
  type MtlsEndpoint,
} from '../../platform/https/server.ts';
import type { ListenerLimits } from '../../platform/https/listener.ts';
import type { PinnedImages } from '../machine/pinned-images.ts';
import type { JournalStore } from '../ports/journal-store.ts';
import type { ForceDeleteGrant } from './drain-permission.ts';
import type { KubernetesService } from './kubernetes-routes.ts';
import type { AgentService } from './service.ts';
import type { RecoveryDeps } from './recovery-routes.ts';
import { buildAgentApp } from './routes.ts';

/** Options of {@link createAgentApi}. */
export interface AgentApiOptions extends MtlsEndpoint {
  readonly service: AgentService;
  readonly journal: JournalStore;
  /** Told about every unexpected (500) error; the HTTP answer never carries a stack. */
  readonly onInternalError?: (error: unknown) => void;
  /** Who may ask for force-delete drains: the machine config's (`forceDeleteGrantOf`). */
  readonly forceDelete?: ForceDeleteGrant | undefined;
  /** The machine's control-plane components, when it renders any. */
  readonly kubernetes?: KubernetesService | undefined;
  /** Services and etcd for recovery (docs/adr/0012 §6). */
  readonly recovery?: RecoveryDeps | undefined;
  /** The images a Kubernetes node keeps pinned, when it runs a node runtime. */
  readonly pinnedImages?: PinnedImages | undefined;
}

/**
 * The agent's caps: its callers are the operator (a few connections: calls and the event stream)
 * and people's CLIs. The operator role is outside `maxConnections` (platform/https/admission.ts),
 * so whatever holds the other places — node certificates that may read, people's followers — the
 * operator still reaches the machine it is upgrading. The other limits are the listener defaults
 * (docs/adr/0004 §6).
 */
export const agentLimits: Partial<ListenerLimits> = {
  maxConnections: 64,
  maxConnectionsPerPeer: 16,
  maxPending: 64,
  maxPendingPerAddress: 16,
};

/** A listening agent API: `url` is `https://host:port`; `close()` cuts open event streams. */
export type AgentApi = ListeningApi;

/** Start the API; resolves once it listens. */
export function createAgentApi(o: AgentApiOptions): Promise<AgentApi> {
  return listenMtls({
    tls: o.tls,
    host: o.host,
    port: o.port,
    limits: { ...agentLimits, ...o.limits },
    build: (serverFactory) =>
      buildAgentApp(
        {
          service: o.service,
          journal: o.journal,
          identify: mtlsIdentity('this agent'),
          ...(o.onInternalError && { onInternalError: o.onInternalError }),
          ...(o.forceDelete && { forceDelete: o.forceDelete }),
          ...(o.kubernetes && { kubernetes: o.kubernetes }),
          ...(o.recovery && { recovery: o.recovery }),
          ...(o.pinnedImages && { pinnedImages: o.pinnedImages }),
        },
        { serverFactory },
      ),
  });
}
