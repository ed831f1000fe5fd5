// SPDX-License-Identifier: Apache-2.0
/** What one reconcile pass needs (docs/adr/0005 §4); `main.ts` builds it from real adapters. */
import type { Release } from '../../core/releases/release.ts';
import type { StreamState } from '../decide/polling.ts';
import type { OperatorSettings } from '../decide/settings.ts';
import type { AgentGateway } from '../ports/agents.ts';
import type { GateProbe } from '../ports/gates.ts';
import type { MachineProvider } from '../ports/provider.ts';
import type { MachineRecord, NewHistoryEvent, OperatorStore } from '../ports/store.ts';

export interface ReconcileDeps {
  readonly store: OperatorStore;
  readonly agents: AgentGateway;
  /**
   * Runs the gate policies' checks (HTTP in production). Without one, every gate fails: a gate
   * nobody can check never lets a start through.
   */
  readonly gates?: GateProbe;
  /**
   * The machine provider of a pool (its `provider` setting; HTTP in production), used by replace
   * pools and by in-place pools' fallback. Undefined: the pool has none.
   */
  readonly providers?: (pool: string) => MachineProvider | undefined;
  /**
   * Told each pass which machines the store manages, so their agents' event streams are followed
   * (`watch.ts`), and asked about each machine's stream: a machine whose stream is open and quiet
   * keeps its last observation until its resync (`decide/polling.ts`). Without one the operator
   * asks every agent every pass.
   */
  readonly watch?: {
    track(machines: readonly MachineRecord[]): void;
    stream?(machine: string): StreamState | undefined;
  };
  /** A discovery scan of the release repository (newest first). */
  readonly releases: () => Promise<readonly Release[]>;
  /**
   * The cluster's Kubernetes version, when the fleet is a Kubernetes cluster: discovery takes
   * only releases whose `dev.molt.kubernetes` range admits it. A failure fails that scan.
   */
  readonly kubernetesVersion?: () => Promise<string>;
  /**
   * The declared molt.dev objects (docs/adr/0011), brought in at the start of each pass: the pools
   * `settings.pools` gives this pass, holds, rollout actions. None: the fleet file alone.
   */
  readonly declared?: { refresh(): Promise<void> };
  /**
   * The Kubernetes plans (docs/adr/0012): each pass records the plans the desired Kubernetes asks
   * for and keeps a runner on every moving plan. None: the operator runs no Kubernetes plans.
   */
  readonly kubernetes?: { pass(): Promise<void> };
  /**
   * The image driver (docs/adr/0013 decision 9): each pass settles, records, plans and starts the
   * image rollouts. None: the operator reads no cluster, and follows no images.
   */
  readonly images?: { pass(): Promise<void> };
  readonly settings: OperatorSettings;
  readonly now: () => number;
  /** Structured log line for the operator's own output (history goes to the store). */
  readonly log: (line: string) => void;
}

export type { NewHistoryEvent };
