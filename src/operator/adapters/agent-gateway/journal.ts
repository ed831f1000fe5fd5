// SPDX-License-Identifier: Apache-2.0
/**
 * {@link AgentJournal} over the same mutual-TLS calls as the agent gateway (its identity check per
 * machine included), for the dashboard's machine page. Answers are kept for a few seconds per
 * machine, so however many pages are open on a machine, its agent is asked at most that often.
 */
import type { OperationSummaryView } from '../../../protocol/agent.ts';
import type { AgentJournal } from '../../ports/agent-journal.ts';
import type { MachineRecord } from '../../ports/store.ts';
import { agentCalls, type AgentGatewayOptions } from './index.ts';

/** How long an answer is reused. */
export const journalCacheMs = 5_000;

/** The journal reader and its connections (close them with the listener that uses it). */
export function createAgentJournal(
  o: AgentGatewayOptions & { readonly now: () => number },
): AgentJournal & { close(): Promise<void> } {
  const { call, close } = agentCalls(o);
  const cache = new Map<string, { at: number; answer: Promise<OperationSummaryView[]> }>();
  return {
    operations(m: MachineRecord) {
      const known = cache.get(m.id);
      if (known !== undefined && o.now() - known.at < journalCacheMs) return known.answer;
      const answer = call(m, (c) => c.operations());
      cache.set(m.id, { at: o.now(), answer });
      // A failure is not kept: the next look asks again.
      void answer.catch(() => {
        if (cache.get(m.id)?.answer === answer) cache.delete(m.id);
      });
      return answer;
    },
    close,
  };
}
