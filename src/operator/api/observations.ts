// SPDX-License-Identifier: Apache-2.0
/**
 * What the operator last saw of each machine, for the API (`GET /v1/machines`, `GET /v1/plan`).
 * The reconcile loop asks every agent for its status each pass through the {@link AgentGateway};
 * {@link observingGateway} wraps that gateway and keeps the last answer (or failure) per machine,
 * so the API reads the loop's own observations without the loop knowing about the API and
 * without asking any agent itself. Only the leader's loop observes: a standby's book stays empty.
 */
import { isMoltError } from '../../core/errors.ts';
import type { AgentGateway } from '../ports/agents.ts';
import type { Observation } from '../runtime/observation.ts';

/** The last observation per machine id. */
export interface ObservationBook {
  get(machine: string): Observation | undefined;
}

/** An {@link ObservationBook} fed by hand (tests) or by {@link observingGateway}. */
export class MemoryObservationBook implements ObservationBook {
  private readonly seen = new Map<string, Observation>();

  get(machine: string): Observation | undefined {
    return this.seen.get(machine);
  }

  set(machine: string, observation: Observation): void {
    this.seen.set(machine, observation);
  }
}

/** `gateway`, recording every status answer and failure into `book` at `now()`. */
export function observingGateway(
  gateway: AgentGateway,
  book: MemoryObservationBook,
  now: () => number,
): AgentGateway {
  return {
    async status(machine) {
      try {
        const status = await gateway.status(machine);
        book.set(machine.id, { at: now(), status });
        return status;
      } catch (e) {
        const error = isMoltError(e) ? `${e.code}: ${e.message}` : String(e);
        book.set(machine.id, { at: now(), error });
        throw e;
      }
    },
    upgrade: (machine, request) => gateway.upgrade(machine, request),
    rollback: (machine) => gateway.rollback(machine),
    close: () => gateway.close(),
  };
}
