// SPDX-License-Identifier: Apache-2.0
/**
 * A typed client of the agent's control-plane and recovery routes with JSON answers
 * (`agent-kubernetes.ts`): what the operator's upgrade plan and the CLI call. Byte streams — an
 * etcd snapshot, a restore upload, a service's log — have their own client.
 */
import type { z } from 'zod';
import {
  ComponentView,
  ControlPlaneView,
  EtcdMemberView,
  ForfeitAnswer,
  KubernetesRoutes as R,
  ServiceView,
  StagedBundle,
  type ComponentApplyBody as ComponentApplyBodySchema,
  type ForfeitBody,
  type KubeComponentName,
  type PrepullBody,
} from './agent-kubernetes.ts';
import { AgentPeer } from './agent-client.ts';
import { createTransport, getJson, postJson, type HttpFetch } from './http-client.ts';

/** The agent's control-plane and recovery routes, typed. */
export interface KubernetesAgentClient {
  readonly baseUrl: string;
  controlPlane(): Promise<ControlPlaneView>;
  prepull(body: PrepullBody): Promise<StagedBundle>;
  /** Resolves once the component runs healthy on the body's spec (it may take minutes). */
  applyComponent(
    name: KubeComponentName,
    body: z.input<typeof ComponentApplyBodySchema>,
  ): Promise<ComponentView>;
  services(): Promise<ServiceView[]>;
  startService(name: string): Promise<ServiceView>;
  stopService(name: string): Promise<ServiceView>;
  restartService(name: string): Promise<ServiceView>;
  etcdMembers(): Promise<EtcdMemberView[]>;
  forfeitLeadership(body?: ForfeitBody): Promise<ForfeitAnswer>;
  removeMember(id: string): Promise<EtcdMemberView[]>;
  rejoin(): Promise<EtcdMemberView[]>;
}

/** A client for the agent at `baseUrl` (`https://host:port`). */
export function createKubernetesAgentClient(options: {
  baseUrl: string;
  fetch: HttpFetch;
}): KubernetesAgentClient {
  const t = createTransport({
    ...options,
    peer: AgentPeer,
  });
  return {
    baseUrl: t.baseUrl,
    controlPlane: () => t.json(ControlPlaneView, R.kubernetes, getJson),
    prepull: (body) => t.json(StagedBundle, R.prepull, postJson(body)),
    applyComponent: (name, body) => t.json(ComponentView, R.component(name), postJson(body)),
    services: () => t.json(ServiceView.array(), R.services, getJson),
    startService: (name) => t.json(ServiceView, R.serviceStart(name), postJson({})),
    stopService: (name) => t.json(ServiceView, R.serviceStop(name), postJson({})),
    restartService: (name) => t.json(ServiceView, R.serviceRestart(name), postJson({})),
    etcdMembers: () => t.json(EtcdMemberView.array(), R.etcdMembers, getJson),
    forfeitLeadership: (body = {}) => t.json(ForfeitAnswer, R.etcdForfeit, postJson(body)),
    removeMember: (id) => t.json(EtcdMemberView.array(), R.etcdRemove(id), postJson({})),
    rejoin: () => t.json(EtcdMemberView.array(), R.etcdRejoin, postJson({})),
  };
}
