// SPDX-License-Identifier: Apache-2.0
/**
 * Composition of the operator's reconcile loop (docs/adr/0005 §4), for `main.ts`: the real
 * adapters the config names, the agents' event streams that wake the loop, the webhook
 * notifications of what it records, the GM image checks (`compose-gm.ts`) and the GM images kept
 * on the nodes (`compose-node-pins.ts`).
 */
import { createAgentEventSource } from './adapters/agent-gateway/events.ts';
import { createHttpGateProbe } from './adapters/http-gate/index.ts';
import type { OperatorMetrics } from './api/metrics.ts';
import { observingGateProbe, type MemoryObservationBook } from './api/observations.ts';
import { providersOf } from './compose.ts';
import type { KubeStatusRunner } from './compose-kube.ts';
import { gmChecks } from './compose-gm.ts';
import { nodePinsOf } from './compose-node-pins.ts';
import { startConfiguredNotifications } from './compose-notify.ts';
import type { GmWatch } from './images/gm-check.ts';
import type { LoadedConfig } from './config.ts';
import type { ImagePolicy } from '../core/images/types.ts';
import type { Release } from '../core/releases/release.ts';
import type { DeclaredRunner } from './loop/declared/index.ts';
import type { ReconcileDeps } from './loop/deps.ts';
import { startWatchedLoop } from './loop/watch.ts';
import type { AgentGateway } from './ports/agents.ts';
import type { Leadership } from './ports/leadership.ts';
import type { OperatorStore } from './ports/store.ts';
import type { CapiMachines } from './ports/capi-machines.ts';

export interface LoopParts {
  readonly store: OperatorStore;
  readonly agents: AgentGateway;
  readonly observations: MemoryObservationBook;
  readonly log: (line: string) => void;
  /** The Kubernetes status mirror, refreshed after each of the leader's passes. */
  readonly status?: KubeStatusRunner | undefined;
  /** The cluster's Kubernetes version, when the fleet is a Kubernetes cluster. */
  readonly kubernetesVersion?: (() => Promise<string>) | undefined;
  /** Discovery over the registry (one cache, shared with the API). */
  readonly releases: () => Promise<readonly Release[]>;
  /** The declared molt.dev objects, brought in at the start of each pass. */
  readonly declared?: DeclaredRunner | undefined;
  /** The Kubernetes plans (docs/adr/0012), driven by each pass. */
  readonly kubernetes?: ReconcileDeps['kubernetes'];
  /** The image driver (docs/adr/0013), driven by each pass. */
  readonly images?: ReconcileDeps['images'];
  /** The GM checks' watch (docs/adr/0013 decision 5), run by the leader beside the loop. */
  readonly gm?: GmWatch | undefined;
  /**
   * The image policies in force, when the operator follows images: their GM digests (and running
   * image rollouts' previous ones) are kept pinned on the nodes (docs/adr/0015 §7).
   */
  readonly imagePolicies?: (() => readonly ImagePolicy[]) | undefined;
  /** The management cluster's Machines (`capi.kubeconfig`): pools with `provider: {capi: {}}`. */
  readonly capiMachines?: CapiMachines | undefined;
}

/** The reconcile loop's dependencies: the real adapters the config names. */
function reconcileDeps(c: LoadedConfig, p: LoopParts): Omit<ReconcileDeps, 'watch'> {
  const { store, agents, log } = p;
  return {
    store,
    agents,
    gates: observingGateProbe(createHttpGateProbe(), p.observations),
    providers: providersOf(c, p.capiMachines),
    releases: p.releases,
    settings: {
      // Read at each use: declared pools change from pass to pass (compose-declared.ts).
      get pools() {
        return c.fleet.pools;
      },
      fleetPolicies: c.fleet.fleetPolicies,
      ...(c.fleet.clusters !== undefined && { clusters: c.fleet.clusters }),
      imageFor: (digest) => `${c.config.registry}/${c.config.repository}@${digest}`,
      unreachableFailMs: c.config.unreachableFail,
      discoverEveryMs: c.config.discoverEvery,
      resyncMs: c.config.resync,
      gateGraceMs: c.config.gateGrace,
      ...(c.publicKeyPem !== undefined && { requireSignature: true }),
    },
    now: () => Date.now(),
    log,
    ...(p.declared !== undefined && { declared: p.declared }),
    ...(p.kubernetesVersion !== undefined && { kubernetesVersion: p.kubernetesVersion }),
    ...(p.kubernetes !== undefined && { kubernetes: p.kubernetes }),
    ...(p.images !== undefined && { images: p.images }),
  };
}

/**
 * The reconcile loop, woken by the agents' event streams, and the webhook notifications of what
 * it records (`compose-notify.ts`); `stop` ends the loop, then the notifications and the streams.
 */
export function startLoop(
  c: LoadedConfig,
  p: LoopParts,
  leadership: Leadership,
  metrics: OperatorMetrics,
): { stop(): Promise<void> } {
  const events = createAgentEventSource(c.pki);
  const notify = startConfiguredNotifications(c, {
    store: p.store,
    leadership,
    metrics,
    log: p.log,
  });
  const gm = gmChecks(c, p.gm, { store: p.store, leadership, log: p.log });
  const pins = nodePinsOf(c, p.imagePolicies, { store: p.store, leadership, log: p.log });
  const loop = startWatchedLoop(reconcileDeps(c, p), events, leadership, {
    intervalMs: c.config.interval,
    onPass: (pass) => {
      metrics.recordPass(pass);
      p.status?.kick();
      notify?.kick();
    },
  });
  // A declared object changed (a Pool applied, a Rollout paused): the next pass starts now.
  p.declared?.onChange(() => {
    loop.wake();
  });
  return {
    async stop() {
      await loop.stop();
      await p.declared?.close();
      await gm?.stop();
      await pins?.stop();
      await notify?.stop();
      await p.status?.stop();
      await events.close();
    },
  };
}
