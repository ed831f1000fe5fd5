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
  /** CheckStagedImage ran and passed: every check of the image is behind us. */
  checked: boolean;
  /** Slot commands this operation ran, in order (WriteSlot, VerifySlot, WriteBootEntry). */
  slotSteps: string[];
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

/** A slot as slot.json and the bootloader describe it. */
interface ModelSlot {
  status: 'ready' | 'writing' | 'bad';
  /** The operation whose image the slot holds (`initial`: installed before the run). */
  image: string;
}

const SLOT_WRITES: ReadonlySet<string> = new Set([
  'MarkSlotUnbootable',
  'WriteSlot',
  'WriteBootEntry',
  'MarkSlotReady',
  'MarkSlotBad',
]);

type SlotCommand = Extract<
  Command,
  {
    readonly type:
      | 'CheckStagedImage'
      | 'VerifyRollbackTarget'
      | 'MarkSlotUnbootable'
      | 'WriteSlot'
      | 'VerifySlot'
      | 'WriteBootEntry'
      | 'MarkSlotReady'
      | 'ArmBootOnce'
      | 'MarkSlotBad';
  }
>;
const SLOT_COMMANDS: ReadonlySet<string> = new Set([
  ...SLOT_WRITES,
  'CheckStagedImage',
  'VerifyRollbackTarget',
  'VerifySlot',
  'ArmBootOnce',
]);
const isSlotCommand = (c: Command): c is SlotCommand => SLOT_COMMANDS.has(c.type);

/** What running a command did: nothing to report, a reboot, or a failure the runner feeds. */
type Effect = undefined | 'rebooted' | { readonly code: string };

export class World {
  state: UpgradeState = initialState;
  record: readonly Command[] = [];
  now = 0;
  bootId = 'boot-0';
  slot: SlotId = 'A';
  readonly loader: Bootloader = { committed: 'A', unbootable: new Set() };
  readonly slots: Record<SlotId, ModelSlot> = {
    A: { status: 'ready', image: 'initial' },
    B: { status: 'ready', image: 'initial' },
  };
  /** Operations whose image the staged checks refuse (bad cmdline, …). */
  readonly badImages = new Set<string>();
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

  /** Someone drops the staged upgrade (the runner feeds it only while Staged). */
  discard(): void {
    this.feed({ type: 'Discarded', by: 'admin' });
  }

  /**
   * Run the record's commands up to (not including) `stop`, as the runner does: a Reboot reboots,
   * a command that fails stops the list and is fed as StepFailed (quiescent phases: best-effort).
   * Returns false when it rebooted or fed a failure.
   */
  execute(stop: number, trialFails = false): boolean {
    const phase = this.state.phase;
    for (const command of this.record.slice(0, stop)) {
      const effect = command.type === 'Reboot' ? 'rebooted' : this.effect(command);
      if (effect === 'rebooted') {
        this.reboot(trialFails);
        return false;
      }
      if (effect === undefined || QuiescentPhases.includes(phase)) continue;
      this.feed({
        type: 'StepFailed',
        phase,
        command: command.type,
        error: { code: effect.code, message: `${command.type} refused` },
      });
      return false;
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

  /** What a command does to the model, or how the real one would refuse (ADR 0004 §3–4). */
  private effect(command: Command): Effect {
    const op = this.state.op;
    const t = op === undefined ? undefined : this.tracked(op.id);
    const effect = this.slotEffect(command, op?.id ?? '-', t);
    this.bootEffect(command);
    // What molt writes never leaves a slot ready without its entry (a test may damage one first).
    if (SLOT_WRITES.has(command.type) && 'slot' in command)
      this.check(
        this.slots[command.slot].status !== 'ready' || !this.loader.unbootable.has(command.slot),
        `slot ${command.slot} is ready without a boot entry after ${command.type}`,
      );
    return effect;
  }

  /** slot.json, the staged checks, and the order every slot write must keep. */
  private slotEffect(command: Command, opId: string, t: Tracked | undefined): Effect {
    if (!isSlotCommand(command)) return undefined;
    const slot = this.slots[command.slot];
    const mine = slot.image === opId && slot.status !== 'bad';
    const bootable = slot.status === 'ready' && !this.loader.unbootable.has(command.slot);
    switch (command.type) {
      case 'CheckStagedImage':
        if (this.badImages.has(opId)) return { code: ErrorCode.ImageInvalid };
        if (t !== undefined) t.checked = true;
        return undefined;
      case 'VerifyRollbackTarget':
      case 'ArmBootOnce':
        return bootable ? undefined : { code: ErrorCode.NoValidSlot };
      case 'MarkSlotUnbootable':
      case 'WriteSlot':
        this.check(t?.checked === true, `${command.type} before every check of the image passed`);
        slot.status = 'writing';
        if (command.type === 'WriteSlot') {
          slot.image = opId;
          t?.slotSteps.splice(0, Infinity, 'WriteSlot');
        }
        return undefined;
      case 'VerifySlot':
      case 'WriteBootEntry':
        if (!mine) return { code: ErrorCode.SlotVerifyFailed };
        t?.slotSteps.push(command.type);
        return undefined;
      case 'MarkSlotReady':
        if (!mine) return { code: ErrorCode.MachineInvalid };
        this.check(readyOrder(t?.slotSteps ?? []), `MarkSlotReady after ${t?.slotSteps.join(',')}`);
        slot.status = 'ready';
        return undefined;
      case 'MarkSlotBad':
        slot.status = 'bad';
        return undefined;
    }
  }

  private bootEffect(command: Command): void {
    const { loader } = this;
    if (command.type === 'WriteBootEntry') loader.unbootable.delete(command.slot);
    else if (command.type === 'ArmBootOnce') {
      if (!loader.unbootable.has(command.slot)) loader.oneShot = command.slot;
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
      t = { verified: false, checked: false, slotSteps: [], leaseOpen: false, cordonOpen: false };
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
    // A staged slot waits to be applied: no reboot, planned by nobody, may switch to it.
    if (this.state.phase === 'Staged')
      this.check(this.loader.oneShot === undefined, 'Staged with the staged slot armed');
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

/** WriteSlot, then VerifySlot, then WriteBootEntry (re-runs after a restart allowed). */
function readyOrder(steps: readonly string[]): boolean {
  const verified = steps.indexOf('VerifySlot');
  return steps[0] === 'WriteSlot' && verified > 0 && steps.lastIndexOf('WriteBootEntry') > verified;
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
    case 'Discarded':
      return `Discarded(${event.by})`;
  }
}
