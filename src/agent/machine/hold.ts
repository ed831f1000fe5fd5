// SPDX-License-Identifier: Apache-2.0
/**
 * The machine's hold, kept by its agent (docs/adr/0004 §11): set and cleared through the API
 * (operator and admin certificates), persisted before it is answered, and checked by the runner
 * when an upgrade is asked for. Only new upgrades are refused, and the reboot that would apply a
 * staged upgrade: a rollback or a plain reboot never is (a hold must not stand in the way of
 * recovery), and an operation already accepted runs on.
 */
import { ErrorCode, MoltError } from '../../core/errors.ts';
import { instant, iso, parseDuration, parseTime } from '../../core/time.ts';
import type { OperationKind } from '../../core/upgrade/events.ts';
import { holdActive, type AgentHoldRequestBody, type HoldView } from '../../protocol/agent-hold.ts';
import type { Clock } from '../ports/clock.ts';
import type { HoldStore } from '../ports/hold-store.ts';
import { heldUntil } from '../../core/quoted-reasons.ts';

/** Who sets a hold: the caller's certificate. */
export type HoldSetter = HoldView['setBy'];

/** The machine's hold as the agent keeps it. */
export interface Holds {
  /** The hold now, expired or not; null when there is none. */
  current(): HoldView | null;
  /** Hold the machine (replacing any hold); resolves once it is persisted. */
  set(request: AgentHoldRequestBody, by: HoldSetter): Promise<HoldView>;
  /** Release the machine; resolves once that is persisted. Not held: nothing changes. */
  clear(): Promise<void>;
  /** Throws MOLT_MACHINE_HELD for an upgrade while held ({@link requireNotHeld}). */
  check(request: HeldRequest): void;
}

/** What the hold check looks at in an operation request. */
export interface HeldRequest {
  readonly kind: OperationKind;
  readonly force?: boolean | undefined;
}

/** The hold `request` asks for, at `now`; an end that is not in the future is MOLT_BAD_INPUT. */
export function holdOf(request: AgentHoldRequestBody, by: HoldSetter, now: number): HoldView {
  const until =
    request.for !== undefined
      ? now + (parseDuration(request.for) ?? 0)
      : (parseTime(request.until ?? '') ?? 0);
  if (until <= now)
    throw new MoltError(
      ErrorCode.BadInput,
      `invalid hold request: until: ${instant(until)} is not in the future`,
    );
  return {
    reason: request.reason,
    until: iso(until),
    setBy: by,
    ...(request.onBehalfOf !== undefined && { onBehalfOf: request.onBehalfOf }),
    setAt: iso(now),
  };
}

/**
 * The hold persisted in `store` (read once, at the agent's start) of machine `node`, whose end is
 * judged by `clock`'s time.
 */
export async function loadHolds(store: HoldStore, clock: Clock, node: string): Promise<Holds> {
  let hold = (await store.load()) ?? null;
  // Writes one at a time, so the hold in memory is always the one on disk.
  let writing: Promise<unknown> = Promise.resolve();
  const write = (next: HoldView | null): Promise<void> => {
    const done = writing.then(async () => {
      if (next === null && hold === null) return;
      await store.save(next ?? undefined);
      hold = next;
    });
    writing = done.catch(() => undefined);
    return done;
  };
  return {
    current: () => hold,
    async set(request, by) {
      const next = holdOf(request, by, clock.now());
      await write(next);
      return next;
    },
    clear: () => write(null),
    check(request) {
      requireNotHeld(hold, request, { node, now: clock.now() });
    },
  };
}

/** How the refusal tells a person to lift the hold: where it was set is where it is released. */
function releaseHint(hold: HoldView, node: string): string {
  const release =
    hold.onBehalfOf === undefined
      ? 'release it with `molt node release`'
      : `release it with \`molt machine release ${node}\` (the operator keeps it on the agent)`;
  return `${release}, or wait until ${hold.until}; an admin can force the upgrade (\`molt node upgrade --force\`)`;
}

/**
 * Throw MOLT_MACHINE_HELD when `request` is an upgrade, not forced, and `hold` has not ended at
 * `now`. `force` reaches the runner only from an admin certificate (the route checks it).
 */
export function requireNotHeld(
  hold: HoldView | null,
  request: HeldRequest,
  facts: { readonly node: string; readonly now: number },
): void {
  if (request.kind !== 'upgrade' || request.force === true) return;
  if (!holdActive(hold, facts.now)) return;
  const by = hold.onBehalfOf ?? hold.setBy.name;
  throw new MoltError(
    ErrorCode.MachineHeld,
    `${facts.node} is ${heldUntil(hold.until, hold.reason, by)}`,
    {
      hint: releaseHint(hold, facts.node),
      details: { hold },
    },
  );
}
