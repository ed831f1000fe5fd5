// SPDX-License-Identifier: Apache-2.0
/**
 * What the operator last saw of each machine, for the API (`GET /v1/machines`, `GET /v1/plan`).
 * The reconcile loop asks every agent for its status each pass through the {@link AgentGateway};
 * {@link observingGateway} wraps that gateway and keeps the last answer (or failure) per machine,
 * so the API reads the loop's own observations without the loop knowing about the API and
 * without asking any agent itself. Only the leader's loop observes: a standby's book stays empty.
 */
import { isMoltError } from '../../core/errors.ts';
import type { GateResult } from '../../core/rollout/types.ts';
import type { AgentGateway } from '../ports/agents.ts';
import type { GateProbe } from '../ports/gates.ts';
import type { Observation } from '../decide/observation.ts';

/** The last observation per machine id, and the last result per health gate. */
export interface ObservationBook {
  get(machine: string): Observation | undefined;
  /**
   * The last observation in which the machine's agent answered (the dashboard tells a machine
   * rebooting in the middle of an operation from one that is lost).
   */
  lastAnswer(machine: string): Observation | undefined;
  gates(): Readonly<Record<string, GateResult>>;
}

/** An {@link ObservationBook} fed by hand (tests) or by {@link observingGateway}. */
export class MemoryObservationBook implements ObservationBook {
  private readonly seen = new Map<string, Observation>();
  private readonly answered = new Map<string, Observation>();
  private readonly gateResults: Record<string, GateResult> = {};

  get(machine: string): Observation | undefined {
    return this.seen.get(machine);
  }

  lastAnswer(machine: string): Observation | undefined {
    return this.answered.get(machine);
  }

  gates(): Readonly<Record<string, GateResult>> {
    return { ...this.gateResults };
  }

  setGate(name: string, result: GateResult): void {
    this.gateResults[name] = result;
  }

  set(machine: string, observation: Observation): void {
    this.seen.set(machine, observation);
    if (observation.status !== undefined) this.answered.set(machine, observation);
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
    apply: (machine, request) => gateway.apply(machine, request),
    discard: (machine, operationId) => gateway.discard(machine, operationId),
    rollback: (machine) => gateway.rollback(machine),
    setHold: (machine, hold) => gateway.setHold(machine, hold),
    clearHold: (machine) => gateway.clearHold(machine),
    close: () => gateway.close(),
  };
}

/** `probe`, recording every gate result into `book` (the API's plan then sees the loop's gates). */
export function observingGateProbe(probe: GateProbe, book: MemoryObservationBook): GateProbe {
  return {
    async check(gate) {
      const result = await probe.check(gate);
      book.setGate(gate.name, result);
      return result;
    },
  };
}
