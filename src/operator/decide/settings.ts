// SPDX-License-Identifier: Apache-2.0
/**
 * What the operator's decisions are configured with (docs/adr/0005 §4): the fleet file's pools and
 * policies and the operator config's limits. `main.ts` builds it from the config; a reconcile pass
 * hands it to discovery, the snapshot and progress.
 */
import type { ClusterPolicy, Policy, Pool } from '../../core/rollout/types.ts';

/** The settings every pass decides with. */
export interface OperatorSettings {
  readonly pools: readonly Pool[];
  readonly fleetPolicies: readonly Policy[];
  /** The fleet file's cluster settings (small control planes). */
  readonly clusters?: readonly ClusterPolicy[];
  /** The image reference agents pull for a release digest (`registry/repository@digest`). */
  readonly imageFor: (digest: string) => string;
  /** An in-flight machine whose agent stays unreachable this long is failed. @default 15 min */
  readonly unreachableFailMs: number;
  /** How often the release repository is scanned. */
  readonly discoverEveryMs: number;
  /**
   * The longest a machine whose event stream is open and quiet goes without being asked for its
   * status (each machine's period is spread over [resync/2, resync)). @default 60 s
   */
  readonly resyncMs?: number;
  readonly requireSignature?: boolean;
  /**
   * After an upgrade the agent reports healthy, the pool's health gates must pass within this long,
   * or the machine is rolled back through its agent and counts as failed. @default 5 min
   */
  readonly gateGraceMs?: number;
}
