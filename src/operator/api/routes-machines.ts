// SPDX-License-Identifier: Apache-2.0
/**
 * `GET /v1/machines` (inventory, holds, last observation), `POST /v1/machines` and `DELETE
 * /v1/machines/:id` (registration), `POST /v1/machines/:id/{hold,release}`: parsed, authorised and
 * answered here; the rules are `../actions/machines.ts`.
 */
import type { FastifyInstance } from 'fastify';
import { ErrorCode, MoltError } from '../../core/errors.ts';
import { iso } from '../../core/time.ts';
import { parseInput } from '../../platform/https/input.ts';
import {
  HoldRequestBody,
  OperatorRoutes,
  RegisterMachineBody,
  ReleaseRequestBody,
  type DeregisterResult,
  type MachineView,
} from '../../protocol/operator.ts';
import {
  deregisterMachine,
  holdMachine,
  registerMachine,
  releaseMachine,
} from '../actions/machines.ts';
import type { OperatorApiDeps, RouteContext } from './context.ts';
import { machineFacts, machineView } from './machine-views.ts';

function machineId(request: { params: unknown }): string {
  const id = (request.params as { id?: unknown }).id;
  if (typeof id !== 'string' || id === '' || id.length > 200)
    throw new MoltError(ErrorCode.BadInput, 'invalid machine id');
  return id;
}

async function viewOf(deps: OperatorApiDeps, id: string): Promise<MachineView> {
  const stored = await deps.store.read();
  const m = stored.machines.find((x) => x.id === id);
  if (m === undefined) throw new MoltError(ErrorCode.UnknownMachine, `machine ${id} is gone`);
  return machineView(m, machineFacts(stored, deps.observations, { id, now: deps.now() }));
}

export function machineRoutes(app: FastifyInstance, c: RouteContext): void {
  const { deps } = c;
  app.post(OperatorRoutes.machines, async (request) => {
    const body = parseInput(RegisterMachineBody, request.body ?? {}, 'registration');
    await registerMachine(deps, c.who(request), body);
    return viewOf(deps, body.id);
  });
  app.delete(OperatorRoutes.machine, async (request): Promise<DeregisterResult> => {
    const id = machineId(request);
    return { id, removed: await deregisterMachine(deps, c.who(request), id) };
  });
  app.get(OperatorRoutes.machines, async () => {
    const stored = await deps.store.read();
    const now = deps.now();
    return stored.machines.map((m) =>
      machineView(m, machineFacts(stored, deps.observations, { id: m.id, now })),
    );
  });
  holdRoutes(app, c);
}

/**
 * `POST /v1/machines/:id/{hold,release}`, for whoever `c.who` names — a certificate on the API, a
 * signed-in person on the dashboard.
 */
export function holdRoutes(app: FastifyInstance, c: RouteContext): void {
  const { deps } = c;
  app.post(OperatorRoutes.hold, async (request) => {
    const id = machineId(request);
    const body = parseInput(HoldRequestBody, request.body ?? {}, 'hold request');
    await holdMachine(deps, c.who(request).name, id, body);
    return viewOf(deps, id);
  });
  app.post(OperatorRoutes.release, async (request) => {
    const id = machineId(request);
    parseInput(ReleaseRequestBody, request.body ?? {}, 'release request');
    const had = await releaseMachine(deps, c.who(request).name, id);
    const released =
      had === undefined
        ? null
        : {
            reason: had.reason,
            until: iso(had.until),
            ...(had.by !== undefined && { by: had.by }),
          };
    return { ...(await viewOf(deps, id)), released };
  });
}
