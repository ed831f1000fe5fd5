// SPDX-License-Identifier: Apache-2.0
/**
 * How the operator talks to machines' agents (docs/adr/0004 §6): mTLS with an operator
 * certificate. One gateway for the fleet; it keeps a client per endpoint. The adapter
 * (`adapters/agent-gateway`) wraps protocol's typed `AgentClient`; tests also run it against real
 * lab agents. Errors are `MoltError`s: `MOLT_AGENT_UNREACHABLE` (retryable: rebooting or down),
 * `MOLT_AGENT_BUSY` (details name the running operation), `MOLT_AGENT_PROTOCOL` (garbage),
 * `MOLT_AGENT_IDENTITY` (the agent at the machine's endpoint presents another machine's
 * certificate: nothing was sent to it).
 */
import type { DrainOverride } from '../../core/drain/pods.ts';
import type { AgentStatus, OperationAccepted } from '../../protocol/agent.ts';
import type { HoldAnswer } from '../../protocol/agent-hold.ts';
import type { MachineRecord } from './store.ts';

/** A person's operator hold, as the operator keeps it on the machine's agent (docs/adr/0004 §11). */
export interface AgentHold {
  readonly reason: string;
  /** Epoch ms. */
  readonly until: number;
  /** The person who held the machine through the operator; it marks the hold as the operator's. */
  readonly onBehalfOf: string;
}

export interface AgentGateway {
  status(machine: MachineRecord): Promise<AgentStatus>;
  upgrade(
    machine: MachineRecord,
    request: {
      readonly image: string;
      readonly preserve?: boolean;
      /** The pool's drain policy, over the machine's own. */
      readonly drain?: DrainOverride;
      /** A 1- or 2-member etcd's loss of quorum is accepted (the cluster's smallControlPlane). */
      readonly acceptQuorumLoss?: boolean;
      /** Pull, write and verify only; {@link AgentGateway.apply} switches later (docs/adr/0019). */
      readonly stage?: boolean;
    },
  ): Promise<OperationAccepted>;
  /**
   * Apply the staged upgrade `operationId` (the agent's reboot request that continues it); refused
   * with `MOLT_NOT_STAGED` when the machine no longer has it staged — never a plain reboot.
   */
  apply(
    machine: MachineRecord,
    request: { readonly operationId: string; readonly acceptQuorumLoss?: boolean },
  ): Promise<OperationAccepted>;
  /** Discard the staged upgrade `operationId` (`MOLT_NOT_CANCELLABLE` when it is not what waits). */
  discard(machine: MachineRecord, operationId: string): Promise<OperationAccepted>;
  rollback(machine: MachineRecord): Promise<OperationAccepted>;
  /** Set (or replace) the machine's hold on its agent; answers the hold the agent keeps now. */
  setHold(machine: MachineRecord, hold: AgentHold): Promise<HoldAnswer>;
  /** Clear the machine's hold on its agent. */
  clearHold(machine: MachineRecord): Promise<HoldAnswer>;
  close(): Promise<void>;
}
