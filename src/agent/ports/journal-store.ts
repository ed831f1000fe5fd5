// SPDX-License-Identifier: Apache-2.0
/**
 * The write-ahead journal (docs/adr/0004 §3): the state machine's record, written before its
 * commands run, and the event log of each operation, which survives reboots.
 */
import type { Command } from '../../core/upgrade/commands.ts';
import type { UpgradeState } from '../../core/upgrade/state.ts';
import type { AgentEvent } from '../../protocol/agent.ts';

export type NewAgentEvent = Omit<AgentEvent, 'seq'>;

export interface JournalRecord {
  readonly rev: number;
  readonly state: UpgradeState;
  /** Commands persisted with the state; run again in full after a crash. */
  readonly commands: readonly Command[];
}

export interface OperationSummary {
  readonly operationId: string;
  readonly firstTime: string;
  readonly lastTime: string;
  readonly events: number;
  readonly result?: AgentEvent['result'];
}

export interface JournalStore {
  load(): Promise<JournalRecord | undefined>;
  /** Atomically replace the record (temp + fsync + rename + fsync dir). */
  save(record: JournalRecord): Promise<void>;
  /**
   * Append one event (fsynced) and notify subscribers. The store numbers events per operation
   * (`seq` from 1), so a reader can resume after `<operationId>:<seq>` across reboots.
   */
  append(event: NewAgentEvent): Promise<AgentEvent>;
  /** Events of one operation with seq > afterSeq, or of every operation (oldest first) when omitted. */
  events(operationId?: string, afterSeq?: number): Promise<readonly AgentEvent[]>;
  operations(): Promise<readonly OperationSummary[]>;
  /** Called for every appended event; returns the unsubscribe function. */
  subscribe(listener: (event: AgentEvent) => void): () => void;
}

/** Summaries of the operations in `events` (any order), oldest first. */
export function summariseOperations(events: readonly AgentEvent[]): OperationSummary[] {
  const byOp = new Map<string, AgentEvent[]>();
  for (const event of events) {
    const list = byOp.get(event.operationId) ?? [];
    list.push(event);
    byOp.set(event.operationId, list);
  }
  const summaries: OperationSummary[] = [];
  for (const [operationId, list] of byOp) {
    const sorted = [...list].sort((a, b) => a.seq - b.seq);
    const first = sorted[0];
    const last = sorted.at(-1);
    if (first === undefined || last === undefined) continue;
    const result = sorted.findLast((e) => e.result !== undefined)?.result;
    summaries.push({
      operationId,
      firstTime: first.time,
      lastTime: last.time,
      events: sorted.length,
      ...(result === undefined ? {} : { result }),
    });
  }
  return summaries.sort((a, b) => a.firstTime.localeCompare(b.firstTime));
}
