// SPDX-License-Identifier: Apache-2.0
/**
 * The agents' live event streams (docs/adr/0005 §4, "Following agents"): the operator follows
 * every managed machine's `/v1/logs?follow=true` so a phase change or an operation's result wakes
 * the reconcile loop at once instead of at the next poll. Status answers stay the source of truth;
 * an event only says "look now". The adapter lives with the agent gateway
 * (`adapters/agent-gateway/events.ts`), over the same mTLS identity.
 */
import type { AgentEvent } from '../../protocol/agent.ts';
import type { MachineRecord } from './store.ts';

export interface AgentEventSource {
  /**
   * Live events of `machine`'s agent from now on, until the stream ends (the agent restarted or
   * went away) or `signal` aborts. Throws `MOLT_AGENT_UNREACHABLE` when it cannot connect.
   * `opened`, when given, is called once the agent accepted the stream (its answer's headers).
   */
  follow(
    machine: MachineRecord,
    signal: AbortSignal,
    opened?: () => void,
  ): AsyncIterable<AgentEvent>;
}
