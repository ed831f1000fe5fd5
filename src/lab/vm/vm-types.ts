// SPDX-License-Identifier: Apache-2.0
/** What the VM runner (vm.ts) takes and gives. */
import type { AccelChoice } from './accel.ts';
import type { PortForward, TapNic } from './qemu-args.ts';
import type { WaitOptions } from './serial-log.ts';

export type { PortForward, TapNic } from './qemu-args.ts';
export type { WaitOptions } from './serial-log.ts';

export interface VmOptions {
  readonly name: string;
  /** The VM's own directory (made if missing). Keep it short: the QMP socket path must fit 107 bytes. */
  readonly dir: string;
  /** A raw disk image (what `molt install --disk` wrote). */
  readonly disk: string;
  /** @default 1024 */
  readonly memoryMiB?: number;
  /** @default 1 */
  readonly cpus?: number;
  /** TCP forwards from 127.0.0.1; `hostPort: 0` picks a free port (see {@link Vm.forwards}). */
  readonly forwards?: readonly PortForward[];
  /** An i6300esb watchdog whose expiry resets the VM. @default true */
  readonly watchdog?: boolean;
  /** @default 'auto' (see accel.ts; `MOLT_VM_ACCEL` overrides) */
  readonly accel?: AccelChoice;
  /** Exit instead of resetting: one QEMU run = one boot (the QEMU suite). @default false */
  readonly noReboot?: boolean;
  /** A virtio NIC on user networking (needed by `forwards`). @default true */
  readonly network?: boolean;
  /** A second virtio NIC on this tap device (a lab bridge's port, made beforehand). */
  readonly tap?: TapNic;
}

export interface Vm {
  readonly name: string;
  readonly dir: string;
  readonly serialLog: string;
  readonly qmpSocket: string;
  /** The VM's EFI variable store. */
  readonly vars: string;
  readonly accel: 'kvm' | 'tcg';
  /** The forwards as bound: host ports are real port numbers, the same on every power-on. */
  readonly forwards: readonly PortForward[];
  /** QEMU's PID in the current (or last) power-on. */
  readonly pid: number;
  /** How many times this VM was powered on (counting the runner's markers in its log). */
  readonly powerOns: number;
  readonly running: boolean;
  /** Resolves when the current power-on's QEMU exits (with its exit code, null if killed). */
  readonly exited: Promise<number | null>;
  /** The console log's size in bytes: pass it as `from` to wait only for what comes next. */
  serialSize(): Promise<number>;
  /** The console from byte `from` on. */
  serial(from?: number): Promise<string>;
  /** The Nth match of `pattern` on the console after `from` (see serial-log.ts); rejects at the deadline with the log's tail. */
  waitFor(pattern: RegExp, options: WaitOptions): Promise<RegExpExecArray>;
  /** A hardware reset (QMP `system_reset`): the disk and the EFI variables stay. */
  reset(): Promise<void>;
  /** A power cut: SIGKILL to QEMU. */
  powerCut(): Promise<void>;
  /** Power the same machine on again: same disk, variable store, forwards and log. */
  powerOn(): Promise<void>;
  /** ACPI power button (QMP `system_powerdown`); killed if still on after `deadlineMs`. True when the guest powered off by itself. */
  shutdown(deadlineMs?: number): Promise<boolean>;
  /** Kill QEMU by its PID (SIGTERM, then SIGKILL); does nothing when it is off. */
  stop(): Promise<void>;
}
