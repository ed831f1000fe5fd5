// SPDX-License-Identifier: Apache-2.0
// A model of the runner, the bootloader and the clock for the property tests (no tests here).
// It feeds only what a correct runner feeds (ADR 0004 §3 conventions in transition.ts), so every
// transition it makes must be legal, and it checks the safety invariants on every step.
import assert from 'node:assert/strict';
import { ErrorCode } from '../errors.ts';
import { otherSlot, type SlotId } from '../slots/slot.ts';
import type { Command } from './commands.ts';
import type { OperationRequest, UpgradeEvent } from './events.ts';
import { QuiescentPhases } from './phase.ts';
import { initialState, type UpgradeState } from './state.ts';
import { isIllegal, transition } from './transition.ts';
import { outcomesOf } from './harness.test.ts';

interface Tracked {
  verified: boolean;
  healthyBoot?: string;
  leaseOpen: boolean;
  cordonOpen: boolean;
}

/** GRUB-like: a one-shot entry consumed at boot, a committed default, entries removed when bad. */
interface Bootloader {
  committed: SlotId;
  oneShot?: SlotId | undefined;
  unbootable: Set<SlotId>;
}

export class World {
  state: UpgradeState = initialState;
  record: readonly Command[] = [];
  now = 0;
  bootId = 'boot-0';
  slot: SlotId = 'A';
  readonly loader: Bootloader = { committed: 'A', unbootable: new Set() };
  readonly trace: string[] = [];
  private boots = 0;
  private readonly ops = new Map<string, Tracked>();

  constructor() {
    this.newBoot('A');
  }

  /** Feed one event the runner would feed; it must be legal. */
  feed(event: UpgradeEvent): void {
    const before = this.state;
    const result = transition(before, event, this.now);
    this.trace.push(
      `${before.phase} + ${describe(event)} → ${isIllegal(result) ? `ILLEGAL ${result.reason}` : `${result.state.phase} [${result.commands.map((c) => c.type).join(',')}]`}`,
    );
    if (isIllegal(result)) assert.fail(`illegal transition\n${this.trace.join('\n')}`);
    const sameBoot = event.type === 'Booted' && before.bootId === event.bootId;
    this.state = result.state;
    // The runner keeps the record's commands on a same-boot restart (it runs them again).
    if (!sameBoot || QuiescentPhases.includes(before.phase)) this.record = result.commands;
    this.observe(before, event, result.commands);
  }

  request(request: OperationRequest): void {
    this.feed({ type: 'Requested', request });
  }

  /** Run the record's commands up to (not including) `stop`; a Reboot reboots. Returns false if rebooted. */
  execute(stop: number, trialFails = false): boolean {
    for (const command of this.record.slice(0, stop)) {
      if (command.type === 'Reboot') {
        this.reboot(trialFails);
        return false;
      }
      this.effect(command);
    }
    return true;
  }

  /** The runner runs the whole record and reports (a failing health check fails it). */
  complete(trialFails = false): void {
    const commands = this.record;
    const phase = this.state.phase;
    if (commands.length === 0) return;
    if (QuiescentPhases.includes(phase)) {
      this.execute(commands.length);
      return;
    }
    const late = commands.findIndex((c) => c.type === 'RunHealthChecks' && this.now >= c.deadline);
    if (late >= 0) {
      if (!this.execute(late, trialFails)) return;
      this.feed({
        type: 'StepFailed',
        phase,
        command: 'RunHealthChecks',
        error: { code: ErrorCode.HealthDeadline, message: 'late' },
      });
      return;
    }
    if (!this.execute(commands.length, trialFails)) return;
    this.feed({ type: 'StepDone', phase, outcomes: outcomesOf(commands) });
  }

  fail(at: number, code: string, indeterminate: boolean): void {
    const commands = this.record;
    const phase = this.state.phase;
    if (commands.length === 0 || QuiescentPhases.includes(phase)) return;
    const index = at % commands.length;
    if (!this.execute(index)) return;
    const command = commands[index]!.type;
    this.feed({
      type: 'StepFailed',
      phase,
      command,
      error: { code, message: `${command} failed`, indeterminate },
    });
  }

  /** The agent is killed after `at` commands and starts again in the same boot. */
  restart(at: number): void {
    if (!this.execute(at % (this.record.length + 1))) return;
    this.feed({ type: 'Booted', bootId: this.bootId, slot: this.slot });
  }

  /** The power is cut after `at` commands; the bootloader picks the slot. */
  powerCut(at: number, trialFails: boolean): void {
    if (!this.execute(at % (this.record.length + 1), trialFails)) return;
    this.reboot(trialFails);
  }

  tick(dt: number): void {
    this.now += dt;
    this.feed({ type: 'Tick' });
  }

  reboot(trialFails: boolean): void {
    const { loader } = this;
    let slot: SlotId | undefined;
    if (loader.oneShot !== undefined) {
      if (!trialFails && !loader.unbootable.has(loader.oneShot)) slot = loader.oneShot;
      loader.oneShot = undefined;
    }
    slot ??= loader.unbootable.has(loader.committed)
      ? otherSlot(loader.committed)
      : loader.committed;
    this.newBoot(slot);
  }

  /** A boot into any slot, whatever the bootloader says (firmware surprises). */
  newBoot(slot: SlotId): void {
    this.boots += 1;
    this.bootId = `boot-${this.boots}`;
    this.slot = slot;
    this.feed({ type: 'Booted', bootId: this.bootId, slot });
  }

  private effect(command: Command): void {
    const { loader } = this;
    if (command.type === 'ArmBootOnce') {
      loader.unbootable.delete(command.slot);
      loader.oneShot = command.slot;
    } else if (command.type === 'DisarmBootOnce') loader.oneShot = undefined;
    else if (command.type === 'Commit') {
      loader.committed = command.slot;
      loader.oneShot = undefined;
    } else if (command.type === 'MarkSlotBad' || command.type === 'MarkSlotUnbootable') {
      loader.unbootable.add(command.slot);
      if (loader.oneShot === command.slot) loader.oneShot = undefined;
    }
  }

  private tracked(id: string): Tracked {
    let t = this.ops.get(id);
    if (t === undefined) {
      t = { verified: false, leaseOpen: false, cordonOpen: false };
      this.ops.set(id, t);
    }
    return t;
  }

  private check(ok: boolean, message: string): void {
    if (!ok) assert.fail(`${message}\n${this.trace.join('\n')}`);
  }

  private observe(before: UpgradeState, event: UpgradeEvent, issued: readonly Command[]): void {
    const op = this.state.op ?? before.op;
    if (op === undefined) return;
    const t = this.tracked(op.id);
    if (event.type === 'StepDone' && event.phase === 'VerifyingSlot') t.verified = true;
    if (event.type === 'StepDone' && event.phase === 'HealthChecking') t.healthyBoot = this.bootId;
    for (const c of issued) {
      if (c.type === 'ArmBootOnce')
        this.check(op.kind !== 'upgrade' || t.verified, 'ArmBootOnce before VerifySlot succeeded');
      if (c.type === 'Commit') {
        this.check(
          c.slot === op.target && this.slot === c.slot,
          `Commit of ${c.slot} while ${this.slot} is booted`,
        );
        this.check(
          t.healthyBoot === this.bootId,
          'Commit without health checks passed in this boot',
        );
      }
      if (c.type === 'AcquireLease') t.leaseOpen = true;
      if (c.type === 'ReleaseLease') t.leaseOpen = false;
      if (c.type === 'Cordon') t.cordonOpen = true;
      if (c.type === 'Uncordon') t.cordonOpen = false;
    }
    if (this.state.phase !== 'Idle') {
      this.check(this.state.op !== undefined, 'a non-Idle state without an operation');
      return;
    }
    this.check(
      this.state.undo.length === 0 && this.state.op === undefined,
      'Idle with undo steps or an operation',
    );
    if (before.phase === 'Idle') return;
    this.check(!t.leaseOpen, `op ${op.id} ended without ReleaseLease after AcquireLease`);
    this.check(
      !t.cordonOpen || this.state.last?.code === ErrorCode.NoValidSlot,
      `op ${op.id} ended cordoned`,
    );
  }
}

function describe(event: UpgradeEvent): string {
  switch (event.type) {
    case 'Requested':
      return `Requested(${event.request.kind})`;
    case 'StepDone':
      return `StepDone(${event.phase})`;
    case 'StepFailed':
      return `StepFailed(${event.phase}, ${event.command})`;
    case 'Booted':
      return `Booted(${event.bootId}, ${event.slot})`;
    case 'Tick':
      return 'Tick';
  }
}
