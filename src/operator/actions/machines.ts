// SPDX-License-Identifier: Apache-2.0
/**
 * A person's (or a node's) actions on the fleet's machines: register, deregister, hold and
 * release. A hold keeps the planner from starting the machine before `until` (it never stops an
 * upgrade in flight); releasing a machine that is not held is not an error. Each is recorded in
 * the history as a `decision` event naming who asked; a hold is then pushed to the machine's
 * agent, which refuses direct upgrades while held (docs/adr/0004 §11) — an agent that cannot be
 * reached gets it from the loop once it answers, and the stored hold stands meanwhile.
 */
import { ErrorCode, MoltError } from '../../core/errors.ts';
import { didYouMean } from '../../core/near-matches.ts';
import { instant, iso, parseDuration, parseTime } from '../../core/time.ts';
import type { Identity } from '../../platform/https/identity.ts';
import type { HoldRequestBody, RegisterMachineBody } from '../../protocol/operator.ts';
import { holdStep } from '../decide/holds.ts';
import type { AgentGateway } from '../ports/agents.ts';
import type { Hold, MachineRecord } from '../ports/store.ts';
import { recordTransition, type TransitionSink } from '../transitions/record.ts';
import { checkSelfRegistration, probeSelf, type SelfRegistration } from './self-registration.ts';

export interface MachineActionDeps extends TransitionSink {
  /** The pools a machine may be registered into. */
  readonly fleet: { readonly pools: readonly { readonly name: string }[] };
  /** The agents to push a hold to at once; none: only the loop pushes. */
  readonly agents?: Pick<AgentGateway, 'status' | 'setHold' | 'clearHold'> | undefined;
  /** Which nodes may register themselves; none: no node may. */
  readonly selfRegistration?: SelfRegistration | undefined;
}

/** The managed machine `id`; `MOLT_UNKNOWN_MACHINE` (with the nearest ids) when there is none. */
export async function managed(deps: TransitionSink, id: string): Promise<MachineRecord> {
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

/**
 * Bring the machine's agent the stored hold (or its release) now, as the loop's next pass would
 * (`decide/holds.ts`: a hold set on the agent directly is left alone). Any failure is the loop's to
 * retry: the stored hold is what counts, and it is already written.
 */
async function pushHold(deps: MachineActionDeps, m: MachineRecord): Promise<void> {
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

/** Hold machine `id` as `body` asks, recorded and pushed to its agent. */
export async function holdMachine(
  deps: MachineActionDeps,
  by: string,
  id: string,
  body: HoldRequestBody,
): Promise<void> {
  const now = deps.now();
  const until = holdUntil(body, now);
  const machine = await managed(deps, id);
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
}

/** Release machine `id`: the hold it had (if any), lifted, recorded and pushed to its agent. */
export async function releaseMachine(
  deps: MachineActionDeps,
  by: string,
  id: string,
): Promise<Hold | undefined> {
  const machine = await managed(deps, id);
  const had = (await deps.store.read()).holds[id];
  if (had !== undefined)
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
  // Also when the store had none: the agent may keep one the loop could not clear yet.
  await pushHold(deps, machine);
  return had;
}

/** A `MachineHold` object's hold (or its deletion) written to the store, recorded. */
export async function applyDeclaredHold(
  sink: TransitionSink,
  h: { readonly machine: string; readonly hold: Hold | undefined },
): Promise<void> {
  await recordTransition(sink, {
    write: (store) => store.setHold(h.machine, h.hold),
    record: {
      event: {
        kind: 'decision',
        machine: h.machine,
        message:
          h.hold === undefined
            ? `${h.machine} released: its MachineHold is gone`
            : `${h.machine} held by ${h.hold.by ?? ''}: ${h.hold.reason}`,
        data: {
          action: h.hold === undefined ? 'release' : 'hold',
          by: h.hold?.by ?? 'kubernetes:MachineHold',
        },
      },
    },
  });
}

/**
 * Register a machine: an operator or admin registers any machine; a node registers only itself,
 * as the `selfRegistration` rules allow, at an endpoint whose agent presents its certificate
 * (`self-registration.ts`). The fleet file's machines are not overwritten through the API.
 */
export async function registerMachine(
  deps: MachineActionDeps,
  who: Identity,
  body: RegisterMachineBody,
): Promise<void> {
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
}

/**
 * Deregister machine `id`: only API-registered machines, and none with an upgrade in flight.
 * True when it was removed; false when the operator had no such machine.
 */
export async function deregisterMachine(
  deps: TransitionSink,
  who: Identity,
  id: string,
): Promise<boolean> {
  const stored = await deps.store.read();
  const m = stored.machines.find((x) => x.id === id);
  if (m === undefined) return false;
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
  return true;
}
