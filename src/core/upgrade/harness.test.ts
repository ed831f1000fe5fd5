// SPDX-License-Identifier: Apache-2.0
// Helpers for the state-machine tests (no tests here): request builders and a step driver that
// feeds what the runner would feed and fails loudly on an illegal transition.
import assert from 'node:assert/strict';
import type { SlotId } from '../slots/slot.ts';
import { Phase } from './phase.ts';
import type { Command, CommandType } from './commands.ts';
import type {
  CommandOutcome,
  OperationKind,
  OperationRequest,
  StepError,
  UpgradeEvent,
} from './events.ts';
import {
  initialState,
  type LastResult,
  type Operation,
  type Transition,
  type UpgradeState,
} from './state.ts';
import { isIllegal, phaseCommands, transition } from './transition.ts';

export const DEADLINE_MS = 1000;

export interface RequestOptions {
  readonly preserve?: boolean;
  readonly stage?: boolean;
  readonly force?: boolean;
  readonly acceptQuorumLoss?: boolean;
  readonly controlPlane?: boolean;
  readonly id?: string;
}

export function request(kind: OperationKind, options: RequestOptions = {}): OperationRequest {
  return {
    id: options.id ?? `op-${kind}`,
    kind,
    ...(kind === 'upgrade' ? { image: 'registry.test/molt/installer:2.0.0' } : {}),
    preserve: options.preserve ?? true,
    stage: options.stage ?? false,
    force: options.force ?? false,
    ...(options.acceptQuorumLoss !== undefined && { acceptQuorumLoss: options.acceptQuorumLoss }),
    controlPlane: options.controlPlane ?? false,
    healthDeadlineMs: DEADLINE_MS,
  };
}

export const types = (commands: readonly Command[]): string[] => commands.map((c) => c.type);

/** The outcomes a successful run of `commands` reports (PullImage returns what it pulled). */
export function outcomesOf(commands: readonly Command[]): CommandOutcome[] {
  return commands.map((c) =>
    c.type === 'PullImage'
      ? {
          command: c.type,
          outcome: 'done',
          data: { pulled: { digest: 'sha256:2222', version: '2.0.0' } },
        }
      : { command: c.type, outcome: 'done' },
  );
}

/** Apply one event; an illegal transition fails the test. */
export function step(state: UpgradeState, event: UpgradeEvent, now = 0): Transition {
  const result = transition(state, event, now);
  if (isIllegal(result))
    assert.fail(`illegal in ${state.phase} on ${event.type}: ${result.reason}`);
  return result;
}

/** A small imperative driver: the state, the last commands, the clock, the boot. */
export class Driver {
  state: UpgradeState = initialState;
  commands: readonly Command[] = [];
  now = 0;
  private boots = 0;

  constructor(slot: SlotId = 'A') {
    this.boot(slot);
  }

  /** Methods, not properties: assertions on one call must not narrow the next. */
  last(): LastResult | undefined {
    return this.state.last;
  }

  op(): Operation | undefined {
    return this.state.op;
  }

  get phase(): string {
    return this.state.phase;
  }

  feed(event: UpgradeEvent): this {
    const result = step(this.state, event, this.now);
    this.state = result.state;
    this.commands = result.commands;
    return this;
  }

  /** A new boot of the machine into `slot`. */
  /** A new boot of `slot`; `crash`: the kernel log a panicking boot before it left (pstore). */
  boot(slot: SlotId, crash?: string): this {
    this.boots += 1;
    return this.feed({
      type: 'Booted',
      bootId: `boot-${this.boots}`,
      slot,
      ...(crash !== undefined && { crash }),
    });
  }

  request(kind: OperationKind, options: RequestOptions = {}): this {
    return this.feed({ type: 'Requested', request: request(kind, options) });
  }

  /** The current commands all succeeded. */
  done(outcomes?: readonly CommandOutcome[]): this {
    return this.feed({
      type: 'StepDone',
      phase: this.state.phase,
      outcomes: outcomes ?? outcomesOf(this.commands),
    });
  }

  /** `command` (default: the phase's first) failed. */
  fail(code = 'MOLT_TEST_FAILURE', command?: CommandType, extra: Partial<StepError> = {}): this {
    const failed = command ?? this.commands[0]?.type;
    assert.ok(failed !== undefined, `no command to fail in ${this.state.phase}`);
    return this.feed({
      type: 'StepFailed',
      phase: this.state.phase,
      command: failed,
      error: { code, message: `${failed} broke`, ...extra },
    });
  }

  tick(now: number): this {
    this.now = now;
    return this.feed({ type: 'Tick' });
  }

  /** StepDone until `phase` is reached (at most 30 steps). */
  until(phase: string): this {
    for (let i = 0; i < 30 && this.state.phase !== phase; i += 1) this.done();
    assert.equal(this.state.phase, phase);
    return this;
  }

  /** What the runner would run again after a restart in this phase. */
  reissued(): readonly Command[] {
    const { op } = this.state;
    assert.ok(op !== undefined);
    return phaseCommands({ ...this.state, op });
  }
}

export const CP = { controlPlane: true, preserve: false } as const;

/** A state in each phase, reached by driving the machine (never built by hand). */
export function stateIn(phase: Phase): UpgradeState {
  const d = new Driver('A');
  switch (phase) {
    case Phase.Idle:
      return d.state;
    case Phase.CheckingRollbackTarget:
      return d.request('rollback', CP).state;
    case Phase.Staged:
      return d.request('upgrade', { ...CP, stage: true }).until(Phase.Staged).state;
    case Phase.Aborting:
      return d.request('upgrade', CP).until(Phase.ReleasingMounts).fail('MOLT_MOUNT_BUSY').state;
    case Phase.RollingBack:
      return d
        .request('upgrade', CP)
        .until(Phase.Rebooting)
        .boot('B')
        .done()
        .tick(DEADLINE_MS + 1).state;
    case Phase.Recovering:
      return d.request('upgrade', CP).until(Phase.Rebooting).boot('A').state;
    case Phase.Rejoining:
      return d.request('upgrade', CP).until(Phase.Rebooting).boot('B').state;
    case Phase.HealthChecking:
    case Phase.Committing:
    case Phase.Uncordoning:
    case Phase.ReleasingLease:
      return d.request('upgrade', CP).until(Phase.Rebooting).boot('B').until(phase).state;
    case Phase.Pulling:
    case Phase.AcquiringLease:
    case Phase.CheckingQuorum:
    case Phase.Cordoning:
    case Phase.Draining:
    case Phase.StoppingServices:
    case Phase.LeavingEtcd:
    case Phase.ReleasingMounts:
    case Phase.WritingSlot:
    case Phase.VerifyingSlot:
    case Phase.ArmingBootOnce:
    case Phase.Rebooting:
      return d.request('upgrade', CP).until(phase).state;
  }
}
