// SPDX-License-Identifier: Apache-2.0
/** Asking every managed machine's agent for its status, a few at a time, each with a deadline. */
import { isMoltError } from '../../core/errors.ts';
import type { AgentGateway } from '../ports/agents.ts';
import type { MachineRecord } from '../ports/store.ts';
import type { Observation } from '../decide/observation.ts';

export async function observeAll(
  agents: AgentGateway,
  machines: readonly MachineRecord[],
  o: { readonly now: () => number; readonly concurrency?: number },
): Promise<Map<string, Observation>> {
  const seen = new Map<string, Observation>();
  const queue = [...machines];
  const worker = async (): Promise<void> => {
    for (let m = queue.shift(); m !== undefined; m = queue.shift()) {
      try {
        seen.set(m.id, { at: o.now(), status: await agents.status(m) });
      } catch (e) {
        const error = isMoltError(e) ? `${e.code}: ${e.message}` : String(e);
        seen.set(m.id, { at: o.now(), error });
      }
    }
  };
  await Promise.all(Array.from({ length: o.concurrency ?? 16 }, worker));
  return seen;
}
