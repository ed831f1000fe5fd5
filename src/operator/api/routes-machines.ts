// SPDX-License-Identifier: Apache-2.0
/**
 * `GET /v1/machines` (inventory, holds, last observation) and `POST /v1/machines/:id/{hold,
 * release}`. A hold keeps the planner from starting the machine before `until` (it never stops
 * an upgrade in flight); releasing a machine that is not held is not an error. Both are recorded
 * in the history as `decision` events naming who asked, then pushed to the machine's agent, which
 * refuses direct upgrades while held (docs/adr/0004 §11); an agent that cannot be reached gets it
 * from the loop once it answers — the stored hold stands meanwhile.
 */
import type { FastifyInstance } from 'fastify';
import { ErrorCode, MoltError } from '../../core/errors.ts';
import { parseDuration, parseTime } from '../../core/time.ts';
import {
  HoldRequestBody,
  OperatorRoutes,
  RegisterMachineBody,
  ReleaseRequestBody,
  type DeregisterResult,
  type MachineView,
} from '../../protocol/operator.ts';
import type { Identity } from '../../platform/https/identity.ts';
import type { MachineRecord } from '../ports/store.ts';
import { didYouMean } from '../../core/near-matches.ts';
import { recordTransition } from '../transitions/record.ts';
import type { OperatorApiDeps, RouteContext } from './context.ts';
import { parseInput } from '../../platform/https/input.ts';
import { instant, iso } from '../../core/time.ts';
import { holdStep } from '../decide/holds.ts';
import { checkSelfRegistration, probeSelf } from './self-registration.ts';
import { machineFacts, machineView } from './machine-views.ts';

function machineId(request: { params: unknown }): string {
  const id = (request.params as { id?: unknown }).id;
  if (typeof id !== 'string' || id === '' || id.length > 200)
    throw new MoltError(ErrorCode.BadInput, 'invalid machine id');
  return id;
}

async function managed(deps: OperatorApiDeps, id: string): Promise<MachineRecord> {
  const { machines } = await deps.store.read();
  const m = machines.find((x) => x.id === id);
  if (m === undefined) {
    const near = didYouMean(
      id,
      machines.map((x) => x.id),
    );
    throw new MoltError(ErrorCode.UnknownMachine, `the operator manages no machine ${id}${near}`, {
      hint: 'list them with `molt machine list`',
    });
  }
  return m;
}

async function viewOf(deps: OperatorApiDeps, id: string): Promise<MachineView> {
  const stored = await deps.store.read();
  const m = stored.machines.find((x) => x.id === id);
  if (m === undefined) throw new MoltError(ErrorCode.UnknownMachine, `machine ${id} is gone`);
  return machineView(m, machineFacts(stored, deps.observations, { id, now: deps.now() }));
}

/**
 * Bring the machine's agent the stored hold (or its release) now, as the loop's next pass would
 * (`decide/holds.ts`: a hold set on the agent directly is left alone). Any failure is the loop's to
 * retry: the stored hold is what counts, and it is already written.
 */
async function pushHold(deps: OperatorApiDeps, m: MachineRecord): Promise<void> {
  const agents = deps.agents;
  if (agents === undefined) return;
  try {
    const reported = (await agents.status(m)).hold;
    const step = holdStep((await deps.store.read()).holds[m.id], reported, deps.now());
    if (step.kind === 'set') await agents.setHold(m, step.hold);
    if (step.kind === 'clear') await agents.clearHold(m);
  } catch {
    // Unreachable, rebooting, refused: the loop pushes it at a later pass.
  }
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
      `invalid hold request: until: ${instant(until)} is not in the future`,
    );
  return until;
}

/**
 * `POST /v1/machines`: an operator or admin registers any machine; a node registers only itself,
 * as the `selfRegistration` rules allow, at an endpoint whose agent presents its certificate
 * (`self-registration.ts`). The fleet file's machines are not overwritten through the API.
 */
async function register(
  deps: OperatorApiDeps,
  who: Identity,
  body: RegisterMachineBody,
): Promise<MachineView> {
  const self = who.role === 'node' ? deps.selfRegistration : undefined;
  if (who.role === 'node') checkSelfRegistration(self?.rules ?? [], who, body);
  if (!deps.fleet.pools.some((p) => p.name === body.pool))
    throw new MoltError(ErrorCode.UnknownPool, `the operator has no pool ${body.pool}`, {
      hint: `pools: ${deps.fleet.pools.map((p) => p.name).join(', ')}`,
    });
  const existing = (await deps.store.read()).machines.find((m) => m.id === body.id);
  if (existing !== undefined && existing.registered !== true)
    throw new MoltError(ErrorCode.RolloutState, `machine ${body.id} is defined in the fleet file`, {
      hint: 'change it in the fleet file; the API registers machines the file does not list',
    });
  const record: MachineRecord = {
    id: body.id,
    endpoint: body.endpoint,
    role: body.role,
    pool: body.pool,
    ...(body.cluster !== undefined && { cluster: body.cluster }),
    labels: body.labels,
    registered: true,
  };
  if (self !== undefined) await probeSelf(self, record);
  await recordTransition(deps, {
    write: (store) => store.putMachine(record),
    record: {
      event: {
        kind: 'decision',
        machine: body.id,
        message: `${body.id} ${existing === undefined ? 'registered' : 're-registered'} by ${who.name} in pool ${body.pool} at ${body.endpoint}`,
        data: { action: 'register', by: who.name, pool: body.pool },
      },
    },
  });
  return viewOf(deps, body.id);
}

/** `DELETE /v1/machines/:id`: only API-registered machines, and none with an upgrade in flight. */
async function deregister(
  deps: OperatorApiDeps,
  who: Identity,
  id: string,
): Promise<DeregisterResult> {
  const stored = await deps.store.read();
  const m = stored.machines.find((x) => x.id === id);
  if (m === undefined) return { id, removed: false };
  if (m.registered !== true)
    throw new MoltError(ErrorCode.RolloutState, `machine ${id} is defined in the fleet file`, {
      hint: 'remove it from the fleet file and restart the operator',
    });
  const busy = stored.rollouts.find((r) => r.machines[id]?.phase === 'InFlight');
  if (busy !== undefined)
    throw new MoltError(
      ErrorCode.RolloutState,
      `machine ${id} is upgrading in rollout ${busy.id}`,
      {
        hint: `wait for it to finish (molt rollout status ${busy.id} --follow)`,
      },
    );
  await recordTransition(deps, {
    write: (store) => store.removeMachine(id),
    record: {
      event: {
        kind: 'decision',
        machine: id,
        message: `${id} deregistered by ${who.name}`,
        data: { action: 'deregister', by: who.name },
      },
    },
  });
  return { id, removed: true };
}

export function machineRoutes(app: FastifyInstance, c: RouteContext): void {
  const { deps } = c;
  app.post(OperatorRoutes.machines, async (request) =>
    register(
      deps,
      c.who(request),
      parseInput(RegisterMachineBody, request.body ?? {}, 'registration'),
    ),
  );
  app.delete(OperatorRoutes.machine, async (request) =>
    deregister(deps, c.who(request), machineId(request)),
  );
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
    const now = deps.now();
    const until = holdUntil(body, now);
    const machine = await managed(deps, id);
    const by = c.who(request).name;
    await recordTransition(deps, {
      write: (store) => store.setHold(id, { reason: body.reason, until, by }),
      record: {
        event: {
          at: now,
          kind: 'decision',
          machine: id,
          message: `${id} held by ${by} until ${instant(until)}: ${body.reason}`,
          data: { action: 'hold', by, until: iso(until), reason: body.reason },
        },
      },
    });
    await pushHold(deps, machine);
    return viewOf(deps, id);
  });
  app.post(OperatorRoutes.release, async (request) => {
    const id = machineId(request);
    parseInput(ReleaseRequestBody, request.body ?? {}, 'release request');
    const machine = await managed(deps, id);
    const had = (await deps.store.read()).holds[id];
    if (had !== undefined) {
      const by = c.who(request).name;
      await recordTransition(deps, {
        write: (store) => store.setHold(id, undefined),
        record: {
          event: {
            kind: 'decision',
            machine: id,
            message: `${id} released by ${by}`,
            data: { action: 'release', by },
          },
        },
      });
    }
    // Also when the store had none: the agent may keep one the loop could not clear yet.
    await pushHold(deps, machine);
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
