// SPDX-License-Identifier: Apache-2.0
/**
 * A machine's journal as its agent summarises it (`GET /v1/operations` on the agent, docs/adr/0004):
 * one entry per operation, with its first and last event and its result. The dashboard's machine
 * page shows it (docs/adr/0007 §13); the adapter is `adapters/agent-gateway/journal.ts`.
 */
import type { OperationSummaryView } from '../../protocol/agent.ts';
import type { MachineRecord } from './store.ts';

export interface AgentJournal {
  /** The machine's operations, as its agent lists them; MOLT_AGENT_UNREACHABLE when it cannot. */
  operations(machine: MachineRecord): Promise<OperationSummaryView[]>;
}
