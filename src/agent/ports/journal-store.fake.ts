// SPDX-License-Identifier: Apache-2.0
/** In-memory {@link JournalStore} for unit tests; passes `testkit/journal-store-conformance.ts`. */
import type { AgentEvent } from '../../protocol/agent.ts';
import {
  summariseOperations,
  type JournalRecord,
  type JournalStore,
  type NewAgentEvent,
  type OperationSummary,
} from './journal-store.ts';

export function createMemoryJournalStore(): JournalStore & { readonly saves: JournalRecord[] } {
  let record: JournalRecord | undefined;
  const saves: JournalRecord[] = [];
  const all: AgentEvent[] = [];
  const listeners = new Set<(event: AgentEvent) => void>();
  return {
    saves,
    load: () => Promise.resolve(record === undefined ? undefined : structuredClone(record)),
    save(next: JournalRecord) {
      record = structuredClone(next);
      saves.push(record);
      return Promise.resolve();
    },
    append(event: NewAgentEvent) {
      const seq = all.filter((e) => e.operationId === event.operationId).length + 1;
      const stored: AgentEvent = { ...event, seq };
      all.push(stored);
      for (const listener of listeners) listener(stored);
      return Promise.resolve(stored);
    },
    events(operationId?: string, afterSeq = 0) {
      return Promise.resolve(
        all.filter(
          (e) =>
            (operationId === undefined || e.operationId === operationId) &&
            (operationId === undefined || e.seq > afterSeq),
        ),
      );
    },
    operations: (): Promise<OperationSummary[]> => Promise.resolve(summariseOperations(all)),
    subscribe(listener: (event: AgentEvent) => void) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}
