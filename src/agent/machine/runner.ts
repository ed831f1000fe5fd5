// SPDX-License-Identifier: Apache-2.0
/**
 * Drives core's upgrade state machine (STYLE rule 3; conventions in core/upgrade/transition.ts):
 * transition → persist the new state and its commands → execute the commands → feed their one
 * result back, one chain at a time. Because the record is written before any command runs, a
 * crash at any point is resumed from the journal: in the same boot the persisted commands run
 * again (they are idempotent); after a reboot the `Booted` event decides (commit, fallback,
 * rollback).
 */
import { ErrorCode, MoltError } from '../../core/errors.ts';
import type { Command } from '../../core/upgrade/commands.ts';
import type { CommandOutcome, UpgradeEvent } from '../../core/upgrade/events.ts';
import { Phase, QuiescentPhases } from '../../core/upgrade/phase.ts';
import { initialState, type UpgradeState } from '../../core/upgrade/state.ts';
import { admission, isIllegal, transition } from '../../core/upgrade/transition.ts';
import type { BootInfo } from '../ports/boot-info.ts';
import type { JournalStore } from '../ports/journal-store.ts';
import { createEventLog } from './events.ts';
import { guardLease, leaseResumer } from './lease-guard.ts';
import { execute } from './executor.ts';
import type { Holds } from './hold.ts';
import type { FaultPoints, MachinePorts } from './ports.ts';
import { createPullControl } from './pull-control.ts';
import {
  busy,
  heldRequest,
  operationRequest,
  requireStaged,
  requireRollbackTarget,
  stepError,
  withDeadline,
  type SubmitRequest,
} from './submit.ts';

export type { SubmitRequest } from './submit.ts';

export interface RunnerOptions {
  readonly journal: JournalStore;
  readonly ports: MachinePorts;
  readonly boot: BootInfo;
  readonly faults: FaultPoints;
  /** The machine's hold: an upgrade asked for while it stands is refused (MOLT_MACHINE_HELD). */
  readonly holds: Pick<Holds, 'check'>;
  readonly controlPlane: boolean;
  readonly healthDeadlineMs: number;
  readonly newOperationId: () => string;
  /** A bug (illegal transition, failed journal write): the agent should stop. */
  readonly onFatal: (error: unknown) => void;
  /** How often deadlines are checked between command lists. @default 1000 */
  readonly tickMs?: number;
  /** Deadline of one PullImage (machine config `pullTimeoutSeconds`). @default 30 minutes */
  readonly pullTimeoutMs?: number;
}

export interface Runner {
  /** Load the journal and feed `Booted`; resolves once the boot is recorded, not when a resumed operation ends. */
  start(): Promise<void>;
  state(): UpgradeState;
  /** Accept an operation; resolves once it is persisted. Throws MOLT_AGENT_BUSY, _NO_VALID_SLOT, _MACHINE_HELD. */
  submit(request: SubmitRequest): Promise<{ operationId: string }>;
  /**
   * Cancel the running pull, or discard the staged upgrade, on behalf of `by` (a certificate
   * name); the operation then ends Failed `MOLT_CANCELLED`, the machine untouched. Throws
   * MOLT_NOT_CANCELLABLE in any other phase.
   */
  cancel(by: string, operation?: string): { operationId: string };
  /** Resolves when no chain is queued or running. */
  settled(): Promise<void>;
  close(): void;
}

const DeadlinePhases: readonly Phase[] = [Phase.Rejoining, Phase.HealthChecking];

export function createRunner(options: RunnerOptions): Runner {
  const { journal, faults } = options;
  const lease = options.ports.lease === undefined ? undefined : guardLease(options.ports.lease);
  const ports: MachinePorts = { ...options.ports, ...(lease === undefined ? {} : { lease }) };
  const events = createEventLog(journal, ports.clock);
  const pulls = createPullControl(ports.clock, options.pullTimeoutMs);
  let state: UpgradeState = initialState;
  const resumer = leaseResumer(lease, events, () => state);
  let rev = 0;
  let queue: Promise<void> = Promise.resolve();
  let tickQueued = false;
  let timer: NodeJS.Timeout | undefined;

  async function persist(next: UpgradeState, commands: readonly Command[]): Promise<void> {
    rev += 1;
    await journal.save({ rev, state: next, commands });
    const before = state;
    state = next;
    await events.transition(before, next);
  }

  async function runOne(command: Command): Promise<CommandOutcome> {
    const pull =
      command.type === 'PullImage' && state.op !== undefined ? pulls.begin(state.op.id) : undefined;
    try {
      return await runWith(command, pull?.signal);
    } finally {
      pull?.end();
    }
  }

  async function runWith(
    command: Command,
    signal: AbortSignal | undefined,
  ): Promise<CommandOutcome> {
    const ctx = {
      ...(signal !== undefined && { signal }),
      op: state.op,
      log: (message: string) =>
        void events.emit(state, { kind: 'log', status: 'info', message }).catch(() => undefined),
      progress: (p: { bytes: number; total: number }) => {
        events.progress(state, p);
      },
    };
    const deadline = state.phase === Phase.Rejoining ? state.op?.deadline : undefined;
    const outcome = await withDeadline(execute(command, ports, ctx), deadline, ports.clock);
    await events.outcome(state, outcome);
    return outcome;
  }

  /** Run one phase's commands; returns the event to feed next, if any. */
  async function run(commands: readonly Command[]): Promise<UpgradeEvent | undefined> {
    if (commands.length === 0) return undefined;
    const phase = state.phase;
    const quiescent = QuiescentPhases.includes(phase);
    await faults.at(phase, 'before');
    const outcomes: CommandOutcome[] = [];
    for (const command of commands) {
      try {
        outcomes.push(await runOne(command));
      } catch (error) {
        const failure = stepError(error);
        await events.emit(state, {
          kind: 'error',
          status: 'failed',
          message: `${command.type} failed: ${failure.message}`,
          error: failure,
        });
        // Best-effort clean-ups of a quiescent phase go on past a failure; anything else reports it.
        if (!quiescent) return { type: 'StepFailed', phase, command: command.type, error: failure };
      }
    }
    await faults.at(phase, 'after');
    return quiescent ? undefined : { type: 'StepDone', phase, outcomes };
  }

  /** Feed `first` and every result it leads to, until the machine waits for the outside world. */
  async function chain(
    first: UpgradeEvent,
    carried?: readonly Command[],
    accepted?: () => void,
  ): Promise<void> {
    let event: UpgradeEvent | undefined = first;
    let resume = carried;
    while (event !== undefined) {
      const result = transition(state, event, ports.clock.now());
      if (isIllegal(result))
        throw new MoltError(
          ErrorCode.Internal,
          `illegal transition from ${state.phase} on ${event.type}: ${result.reason}`,
        );
      // An agent restart in the same boot: the record's commands were maybe cut short; run them again.
      const commands =
        result.commands.length === 0 && resume !== undefined ? resume : result.commands;
      resume = undefined;
      await persist(result.state, commands);
      accepted?.();
      event = await run(commands);
    }
  }

  function enqueue(step: () => Promise<void>): Promise<void> {
    const next = queue.then(step);
    queue = next.catch((error: unknown) => {
      options.onFatal(error);
    });
    return next;
  }

  /** A kill between persisting the end of an operation and logging its result must not lose the result. */
  async function recordLastResult(): Promise<void> {
    const last = state.last;
    if (last === undefined || state.op?.id === last.operationId) return;
    const logged = await journal.events(last.operationId);
    if (logged.length === 0 || logged.some((e) => e.kind === 'result')) return;
    await events.result(last, state.phase);
  }

  function tick(): void {
    if (tickQueued || !DeadlinePhases.includes(state.phase)) return;
    tickQueued = true;
    void enqueue(async () => {
      tickQueued = false;
      if (DeadlinePhases.includes(state.phase)) await chain({ type: 'Tick' });
    }).catch(() => undefined);
  }

  return {
    async start() {
      lease?.onLost(resumer.onLost);
      const record = await journal.load();
      state = record?.state ?? initialState;
      rev = record?.rev ?? 0;
      // Same boot (the agent restarted): the record's commands were maybe cut short, run them again —
      // in a quiescent phase too, where they are the rest of a clean-up (uncordon, start services).
      const sameBoot = record !== undefined && record.state.bootId === options.boot.bootId;
      const carried = sameBoot && record.commands.length > 0 ? record.commands : undefined;
      let booted: () => void = () => undefined;
      const recorded = new Promise<void>((resolve) => (booted = resolve));
      const whole = enqueue(async () => {
        await recordLastResult();
        // Before the chain, so a ReleaseLease of this boot's chain cannot be overtaken by a resume.
        await resumer.resume('after the restart');
        await chain(
          {
            type: 'Booted',
            bootId: options.boot.bootId,
            slot: options.boot.slot,
            ...(options.boot.crash !== undefined && { crash: options.boot.crash }),
          },
          carried,
          booted,
        );
      });
      await Promise.race([recorded, whole]);
      timer = setInterval(tick, options.tickMs ?? 1000);
      timer.unref();
    },
    state: () => state,
    async submit(request) {
      // Fast answer while a chain runs (the queue is busy for minutes during an upgrade).
      const early = admission(state, request.kind);
      if (!early.ok) throw busy(early);
      requireStaged(state, request);
      let accept: (id: string) => void = () => undefined;
      let refuse: (error: unknown) => void = () => undefined;
      const answer = new Promise<string>((resolve, reject) => {
        accept = resolve;
        refuse = reject;
      });
      const whole = enqueue(async () => {
        const verdict = admission(state, request.kind);
        if (!verdict.ok) {
          refuse(busy(verdict));
          return;
        }
        try {
          requireStaged(state, request);
          options.holds.check(heldRequest(state, request)); // before anything is persisted
          if (request.kind === 'rollback') await requireRollbackTarget(ports, state);
        } catch (error) {
          refuse(error);
          return;
        }
        // In Staged a reboot continues the staged operation under its own id.
        const id =
          state.phase === Phase.Staged && state.op !== undefined
            ? state.op.id
            : options.newOperationId();
        await chain(
          { type: 'Requested', request: operationRequest(id, request, options) },
          undefined,
          () => {
            accept(id);
          },
        );
      });
      whole.catch(refuse);
      return { operationId: await answer };
    },
    cancel(by, operation) {
      const op = state.op;
      if (operation !== undefined && op?.id !== operation)
        throw new MoltError(
          ErrorCode.NotCancellable,
          `operation ${operation} is not the one running (${op === undefined ? 'none runs' : `${op.kind} ${op.id} is ${state.phase}`})`,
        );
      if (state.phase !== Phase.Staged || op === undefined) return pulls.cancel(state, by);
      // Checked again inside the queue: a reboot request queued first applies it instead.
      void enqueue(async () => {
        if (state.phase === Phase.Staged && state.op?.id === op.id)
          await chain({ type: 'Discarded', by });
      });
      return { operationId: op.id };
    },
    settled: () => queue,
    close() {
      if (timer !== undefined) clearInterval(timer);
    },
  };
}
