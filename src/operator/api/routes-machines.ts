// SPDX-License-Identifier: Apache-2.0
/**
 * `GET /v1/machines` (inventory, holds, last observation) and `POST /v1/machines/:id/{hold,
 * release}`. A hold keeps the planner from starting the machine before `until` (it never stops
 * an upgrade in flight); releasing a machine that is not held is not an error. Both are recorded
 * in the history as `decision` events naming who asked.
 */
import type { FastifyInstance } from 'fastify';
import { ErrorCode, MoltError } from '../../core/errors.ts';
import { parseDuration, parseTime } from '../../protocol/fleet-schema.ts';
import {
  HoldRequestBody,
  OperatorRoutes,
  ReleaseRequestBody,
  type MachineView,
} from '../../protocol/operator.ts';
import type { MachineRecord } from '../ports/store.ts';
import type { OperatorApiDeps, RouteContext } from './context.ts';
import { parseInput } from '../../platform/https/input.ts';
import { iso, machineView } from './views.ts';

function machineId(request: { params: unknown }): string {
  const id = (request.params as { id?: unknown }).id;
  if (typeof id !== 'string' || id === '' || id.length > 200)
    throw new MoltError(ErrorCode.BadInput, 'invalid machine id');
  return id;
}

async function managed(deps: OperatorApiDeps, id: string): Promise<MachineRecord> {
  const m = (await deps.store.read()).machines.find((x) => x.id === id);
  if (m === undefined)
    throw new MoltError(ErrorCode.UnknownMachine, `the operator manages no machine ${id}`, {
      hint: 'list them with `molt machine list`',
    });
  return m;
}

async function viewOf(deps: OperatorApiDeps, id: string): Promise<MachineView> {
  const stored = await deps.store.read();
  const m = stored.machines.find((x) => x.id === id);
  if (m === undefined) throw new MoltError(ErrorCode.UnknownMachine, `machine ${id} is gone`);
  return machineView(m, stored.holds[id], deps.observations.get(id));
}

/** Epoch ms the hold ends; a time not in the future is refused (it would hold nothing). */
function holdUntil(body: HoldRequestBody, now: number): number {
  const until =
    body.for !== undefined
      ? now + (parseDuration(body.for) ?? 0)
      : (parseTime(body.until ?? '') ?? 0);
  if (until <= now)
    throw new MoltError(
      ErrorCode.BadInput,
      `invalid hold request: until: ${iso(until)} is not in the future`,
    );
  return until;
}

export function machineRoutes(app: FastifyInstance, c: RouteContext): void {
  const { deps } = c;
  app.get(OperatorRoutes.machines, async () => {
    const stored = await deps.store.read();
    return stored.machines.map((m) =>
      machineView(m, stored.holds[m.id], deps.observations.get(m.id)),
    );
  });
  app.post(OperatorRoutes.hold, async (request) => {
    const id = machineId(request);
    const body = parseInput(HoldRequestBody, request.body ?? {}, 'hold request');
    const now = deps.now();
    const until = holdUntil(body, now);
    await managed(deps, id);
    const by = c.who(request).name;
    await deps.store.setHold(id, { reason: body.reason, until, by });
    await deps.store.appendHistory({
      at: now,
      kind: 'decision',
      machine: id,
      message: `${id} held by ${by} until ${iso(until)}: ${body.reason}`,
      data: { action: 'hold', by, until: iso(until), reason: body.reason },
    });
    return viewOf(deps, id);
  });
  app.post(OperatorRoutes.release, async (request) => {
    const id = machineId(request);
    parseInput(ReleaseRequestBody, request.body ?? {}, 'release request');
    await managed(deps, id);
    const had = (await deps.store.read()).holds[id];
    if (had !== undefined) {
      const by = c.who(request).name;
      await deps.store.setHold(id, undefined);
      await deps.store.appendHistory({
        at: deps.now(),
        kind: 'decision',
        machine: id,
        message: `${id} released by ${by}`,
        data: { action: 'release', by },
      });
    }
    return viewOf(deps, id);
  });
}
