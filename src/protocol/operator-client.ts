// SPDX-License-Identifier: Apache-2.0
/**
 * The typed client of the operator API (docs/adr/0005 §5), for `molt rollout`, `molt machine`, the
 * dashboard and tests. Like the agent's client it takes an injected `fetch`-like function (the CLI
 * passes undici's `fetch` over an mTLS `Agent`). Error answers become MoltErrors with the
 * operator's code, hint and details; a transport failure that is not already a MoltError is a
 * retryable `MOLT_OPERATOR_UNREACHABLE`; an answer that is not this protocol is
 * `MOLT_OPERATOR_PROTOCOL`.
 */
import type { z } from 'zod';
import { ErrorCode } from '../core/errors.ts';
import type { AgentFetch } from './agent-client.ts';
import { createTransport, deleteJson, getJson, postJson, queryString } from './http-client.ts';
import {
  BlockResult,
  BlockView,
  HistoryEventView,
  MachineView,
  OperatorRoutes,
  ReleaseAnswer,
  PlanView,
  RolloutActionResult,
  RolloutSummaryView,
  RolloutView,
  DeregisterResult,
  KubeClusterStatusView,
  KubePlanAnswer,
  KubernetesOperatorRoutes as K,
  ImagesOperatorRoutes,
  ImagesView,
  kubePath,
  operatorPath,
  type BlockRequestBody,
  type HoldRequestBody,
  type UnblockRequestBody,
  type RegisterMachineBody,
} from './operator.ts';
import { ImagePlanView } from './operator-image-plan.ts';

/** A `fetch`-like function (the same shape the agent client takes). */
export type OperatorFetch = AgentFetch;

/** Options of {@link OperatorClient.events}. */
export interface OperatorEventsOptions {
  /** Keep the stream open for new events (the operator polls its store for them). */
  readonly follow?: boolean;
  /** Only this rollout's events. */
  readonly rollout?: string;
  /** Resume after this seq (sent as `Last-Event-ID`). */
  readonly after?: number;
}

/** The operator API, typed. */
export interface OperatorClient {
  readonly baseUrl: string;
  rollouts(): Promise<RolloutSummaryView[]>;
  rollout(id: string): Promise<RolloutView>;
  pause(id: string, body?: { reason?: string }): Promise<RolloutActionResult>;
  resume(id: string, body?: { force?: boolean; reason?: string }): Promise<RolloutActionResult>;
  approve(id: string, body?: { reason?: string }): Promise<RolloutActionResult>;
  cancel(id: string, body?: { reason?: string }): Promise<RolloutActionResult>;
  /** Start the coordinated rollback of rollout `id`; answers the rollback rollout. */
  rollback(id: string, body?: { reason?: string }): Promise<RolloutActionResult>;
  machines(): Promise<MachineView[]>;
  hold(id: string, body: HoldRequestBody): Promise<MachineView>;
  /** Lift the machine's hold; `released` says which hold that was (`null`: none). */
  release(id: string): Promise<ReleaseAnswer>;
  /** Register a machine (itself, with a node certificate; any, as operator or admin). */
  register(body: z.input<typeof RegisterMachineBody>): Promise<MachineView>;
  /** Deregister a machine that registered through the API. */
  deregister(id: string): Promise<DeregisterResult>;
  history(options?: {
    after?: number;
    limit?: number;
    rollout?: string;
  }): Promise<HistoryEventView[]>;
  /** History events as SSE; ends with the stream (not following) or when the consumer stops. */
  events(options?: OperatorEventsOptions): AsyncIterable<HistoryEventView>;
  plan(options?: { explain?: boolean }): Promise<PlanView>;
  blocks(): Promise<BlockView[]>;
  block(body: BlockRequestBody): Promise<BlockResult>;
  unblock(body: UnblockRequestBody): Promise<BlockResult>;
  /** The Prometheus exposition text of `GET /metrics`. */
  metrics(): Promise<string>;
  /** What every image policy's followed containers run and would move to (docs/adr/0013). */
  images(): Promise<ImagesView>;
  /**
   * The image driver's last plan (`GET /v1/images/plan`). MOLT_BAD_INPUT when the operator follows
   * no images, or is older than the route (its 404 is MOLT_BAD_INPUT too).
   */
  imagePlan(): Promise<ImagePlanView>;
  /** A cluster's control plane per machine and its Kubernetes plans (docs/adr/0012). */
  kubernetes(cluster: string): Promise<KubeClusterStatusView>;
  kubernetesUpgrade(
    cluster: string,
    body: { version: string; dryRun?: boolean },
  ): Promise<KubePlanAnswer>;
  kubernetesFinalize(cluster: string, body?: { dryRun?: boolean }): Promise<KubePlanAnswer>;
  kubernetesRollback(
    cluster: string,
    body?: { reason?: string; dryRun?: boolean },
  ): Promise<KubePlanAnswer>;
}

/** A client for the operator at `baseUrl` (`https://host:port`). */
export function createOperatorClient(options: {
  baseUrl: string;
  fetch: OperatorFetch;
}): OperatorClient {
  const t = createTransport({
    ...options,
    peer: {
      name: 'operator',
      unreachable: ErrorCode.OperatorUnreachable,
      protocol: ErrorCode.OperatorProtocol,
    },
  });
  const action = (route: string, id: string, body: unknown): Promise<RolloutActionResult> =>
    t.json(RolloutActionResult, operatorPath(route, id), postJson(body));
  return {
    baseUrl: t.baseUrl,
    rollouts: () => t.json(RolloutSummaryView.array(), OperatorRoutes.rollouts, getJson),
    rollout: (id) => t.json(RolloutView, operatorPath(OperatorRoutes.rollout, id), getJson),
    pause: (id, body = {}) => action(OperatorRoutes.pause, id, body),
    resume: (id, body = {}) => action(OperatorRoutes.resume, id, body),
    approve: (id, body = {}) => action(OperatorRoutes.approve, id, body),
    cancel: (id, body = {}) => action(OperatorRoutes.cancel, id, body),
    rollback: (id, body = {}) => action(OperatorRoutes.rollback, id, body),
    machines: () => t.json(MachineView.array(), OperatorRoutes.machines, getJson),
    hold: (id, body) => t.json(MachineView, operatorPath(OperatorRoutes.hold, id), postJson(body)),
    release: (id) => t.json(ReleaseAnswer, operatorPath(OperatorRoutes.release, id), postJson({})),
    register: (body) => t.json(MachineView, OperatorRoutes.machines, postJson(body)),
    deregister: (id) =>
      t.json(DeregisterResult, operatorPath(OperatorRoutes.machine, id), deleteJson),
    history: (o = {}) =>
      t.json(
        HistoryEventView.array(),
        OperatorRoutes.history +
          queryString({
            after: o.after?.toString(),
            limit: o.limit?.toString(),
            rollout: o.rollout,
          }),
        getJson,
      ),
    events: (o = {}) =>
      t.stream(HistoryEventView, {
        path:
          OperatorRoutes.events +
          queryString({ follow: o.follow === true ? 'true' : undefined, rollout: o.rollout }),
        headers: o.after === undefined ? {} : { 'last-event-id': String(o.after) },
        // Errors name the stream without its query, as they always have.
        url: t.baseUrl + OperatorRoutes.events,
      }),
    plan: (o = {}) =>
      t.json(
        PlanView,
        OperatorRoutes.plan + queryString({ explain: o.explain === true ? 'true' : undefined }),
        getJson,
      ),
    blocks: () => t.json(BlockView.array(), OperatorRoutes.blocks, getJson),
    block: (body) => t.json(BlockResult, OperatorRoutes.block, postJson(body)),
    unblock: (body) => t.json(BlockResult, OperatorRoutes.unblock, postJson(body)),
    metrics: () =>
      t.text(OperatorRoutes.metrics, { method: 'GET', headers: { accept: 'text/plain' } }),
    images: () => t.json(ImagesView, ImagesOperatorRoutes.list, getJson),
    imagePlan: () => t.json(ImagePlanView, ImagesOperatorRoutes.plan, getJson),
    kubernetes: (cluster) => t.json(KubeClusterStatusView, kubePath(K.status, cluster), getJson),
    kubernetesUpgrade: (cluster, body) =>
      t.json(KubePlanAnswer, kubePath(K.upgrade, cluster), postJson(body)),
    kubernetesFinalize: (cluster, body = {}) =>
      t.json(KubePlanAnswer, kubePath(K.finalize, cluster), postJson(body)),
    kubernetesRollback: (cluster, body = {}) =>
      t.json(KubePlanAnswer, kubePath(K.rollback, cluster), postJson(body)),
  };
}
