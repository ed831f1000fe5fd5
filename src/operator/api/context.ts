// SPDX-License-Identifier: Apache-2.0
/** What the operator API's routes need (docs/adr/0005 §5); `main.ts` builds it from real adapters. */
import type { FastifyRequest } from 'fastify';
import type { Release } from '../../core/releases/release.ts';
import type { Identity } from '../../platform/https/identity.ts';
import type { AgentJournal } from '../ports/agent-journal.ts';
import type { AgentGateway } from '../ports/agents.ts';
import type { FleetLockStore } from '../ports/fleetlock-store.ts';
import type { OperatorStore } from '../ports/store.ts';
import type { FleetLockGroup } from './fleetlock-groups.ts';
import type { OperatorMetrics } from './metrics.ts';
import type { ObservationBook } from './observations.ts';
import type { FleetPolicies } from '../decide/snapshot.ts';
import type { SelfRegistration } from '../actions/self-registration.ts';
import type { KubernetesApi } from '../kubernetes/deps.ts';
import type { ImagesDeps } from '../images/observe.ts';

export interface OperatorApiDeps {
  readonly store: OperatorStore;
  /** The loop's last look at each machine. */
  readonly observations: ObservationBook;
  readonly fleet: FleetPolicies;
  readonly metrics: OperatorMetrics;
  readonly isLeader: () => boolean;
  /** The FleetLock endpoint's semaphores and groups (one group per pool). */
  readonly fleetLock: {
    readonly store: FleetLockStore;
    readonly groups: (group: string) => FleetLockGroup | undefined;
    /** Told about holders whose slots expired and were freed. */
    readonly onRecovered?: (group: string, ids: readonly string[]) => void;
  };
  /**
   * The machines' agents, to push a hold or release to at once (the loop pushes what this could
   * not at its next pass). None: only the loop pushes.
   */
  readonly agents?: Pick<AgentGateway, 'status' | 'setHold' | 'clearHold'>;
  /** The machines' journals as their agents summarise them (the dashboard's machine page). */
  readonly journal?: AgentJournal;
  /** Which nodes may register themselves, and the check of their agent; none: no node may. */
  readonly selfRegistration?: SelfRegistration;
  /** The registry's releases, to check what a person blocks names one; absent: rollouts' only. */
  readonly releases?: () => Promise<readonly Release[]>;
  /** The cluster's Kubernetes version, when the fleet is one (release ranges in `GET /v1/plan`). */
  readonly kubernetesVersion?: () => Promise<string>;
  /** The Kubernetes plans (docs/adr/0012); none: the Kubernetes routes answer that there are none. */
  readonly kubernetes?: KubernetesApi;
  /** What image policies follow (docs/adr/0013); none: `GET /v1/images` answers there are none. */
  readonly images?: ImagesDeps;
  /** Epoch ms. */
  readonly now: () => number;
  /** Told about every 500 (a bug), since Fastify's logger is off and the body carries no stack. */
  readonly onInternalError?: (error: unknown) => void;
  /** How often a following event stream looks for new history. @default 1000 */
  readonly followPollMs?: number;
}

/** The routes' view of a request: the dependencies and the verified caller. */
export interface RouteContext {
  readonly deps: OperatorApiDeps;
  readonly who: (request: FastifyRequest) => Identity;
}
