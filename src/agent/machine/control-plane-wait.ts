// SPDX-License-Identifier: Apache-2.0
/**
 * Waiting for a component just (re)started: healthy after an apply, listening at a start. A
 * process that exits is given up on at once — a flag the binary refuses ends it within a second,
 * and waiting out the whole bound for it would only keep the machine on a dead component longer.
 */
import { ErrorCode, MoltError } from '../../core/errors.ts';
import type { ComponentSpec } from '../../core/kubernetes/render.ts';
import type { Clock } from '../ports/clock.ts';
import type { ComponentProbe, ComponentSupervisor } from '../ports/control-plane.ts';

export interface WaitPorts {
  readonly supervisor: ComponentSupervisor;
  readonly probe: ComponentProbe;
  readonly clock: Clock;
}

const pollMs = 500;

/** Undefined once `spec` runs healthy; otherwise why it did not within `boundMs`. */
export async function waitHealthy(
  p: WaitPorts,
  spec: ComponentSpec,
  boundMs: number,
): Promise<string | undefined> {
  const deadline = p.clock.now() + boundMs;
  for (;;) {
    const state = await p.supervisor.state(spec.name);
    if (!state.running) return 'it exited';
    const r = await p.probe.healthy(spec.name, spec.port);
    if (r.ok) return undefined;
    if (p.clock.now() >= deadline)
      return `not healthy after ${String(Math.round(boundMs / 1000))} s: ${r.message}`;
    await p.clock.sleep(pollMs);
  }
}

/** Resolve once `spec` listens on its port. @throws `MOLT_SERVICE_START_FAILED` with its log's tail */
export async function waitListening(
  p: WaitPorts,
  spec: ComponentSpec,
  boundMs: number,
): Promise<void> {
  const deadline = p.clock.now() + boundMs;
  for (;;) {
    const state = await p.supervisor.state(spec.name);
    const why = !state.running
      ? 'exited at start'
      : (await p.probe.listening(spec.port))
        ? undefined
        : p.clock.now() >= deadline
          ? 'did not listen in time'
          : 'waiting';
    if (why === undefined) return;
    if (why !== 'waiting')
      throw new MoltError(
        ErrorCode.ServiceStartFailed,
        `${spec.name} ${why}:\n${await p.supervisor.logTail(spec.name, 30)}`,
        { hint: `see its log (molt node logs --service ${spec.name})` },
      );
    await p.clock.sleep(pollMs / 5);
  }
}
