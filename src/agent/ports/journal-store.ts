// SPDX-License-Identifier: Apache-2.0
/**
 * The write-ahead journal (docs/adr/0004 §3): the state machine's record, written before its
 * commands run, and the event log of each operation, which survives reboots.
 */
import type { Command } from '../../core/upgrade/commands.ts';
import type { UpgradeState } from '../../core/upgrade/state.ts';
import type { AgentEvent } from '../../protocol/agent.ts';

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
  /** Append one event (fsynced) and notify subscribers. */
  append(event: AgentEvent): Promise<void>;
  /** Events of one operation (all operations when omitted) with seq > afterSeq. */
  events(operationId?: string, afterSeq?: number): Promise<readonly AgentEvent[]>;
  operations(): Promise<readonly OperationSummary[]>;
  /** Called for every appended event; returns the unsubscribe function. */
  subscribe(listener: (event: AgentEvent) => void): () => void;
}
