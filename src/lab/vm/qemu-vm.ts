// SPDX-License-Identifier: Apache-2.0
/**
 * One VM's QEMU across its power-ons: started with the same command line each time (so the same
 * disk, EFI variable store, forwards and console log), reset and powered down through QMP, cut
 * and stopped by its PID.
 */
import { appendFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ErrorCode, MoltError } from '../../core/errors.ts';
import { startProcess, type ManagedProcess } from '../../platform/process/managed-process.ts';
import { qmpExecute } from './qmp.ts';
import { qemuArgs, type PortForward, type QemuSpec } from './qemu-args.ts';
import { explainSilence } from './quiet-console.ts';
import { readSerial, serialSize, waitForSerial, type WaitOptions } from './serial-log.ts';
import { runQueueWaitMs } from '../../platform/process/cpu-time.ts';
import type { Vm } from './vm-types.ts';

const MonitorDeadlineMs = 15_000;

/** Wait until QEMU's monitor answers (all devices and forwards are set up by then). */
async function monitorUp(name: string, qemu: ManagedProcess, socket: string): Promise<void> {
  const state = { exited: false };
  void qemu.exited.then(() => (state.exited = true));
  const deadline = performance.now() + MonitorDeadlineMs;
  for (;;) {
    if (state.exited)
      throw new MoltError(
        ErrorCode.VmFailed,
        `VM ${name}: QEMU exited at start:\n${qemu.output().slice(-2000)}`,
        {
          hint: `QEMU's messages are in ${join(socket, '..', 'qemu.log')}`,
        },
      );
    const up = await qmpExecute(socket, 'query-status', {}, 1_000).then(
      () => true,
      () => false,
    );
    if (up) return;
    if (performance.now() > deadline) {
      await qemu.stop(1_000);
      throw new MoltError(
        ErrorCode.VmFailed,
        `VM ${name}: QEMU's monitor did not answer in ${MonitorDeadlineMs} ms`,
      );
    }
    await sleep(100);
  }
}

/** A {@link Vm} driving qemu-system-x86_64. */
export class QemuVm implements Vm {
  private qemu: ManagedProcess | undefined;
  private off = true;

  readonly name: string;
  readonly dir: string;
  private readonly spec: QemuSpec;
  powerOns: number;

  constructor(name: string, dir: string, spec: QemuSpec, powerOns: number) {
    this.name = name;
    this.dir = dir;
    this.spec = spec;
    this.powerOns = powerOns;
  }

  get serialLog(): string {
    return this.spec.serialLog;
  }
  get qmpSocket(): string {
    return this.spec.qmpSocket;
  }
  get vars(): string {
    return this.spec.vars;
  }
  get accel(): 'kvm' | 'tcg' {
    return this.spec.accel;
  }
  get forwards(): readonly PortForward[] {
    return this.spec.forwards;
  }
  get pid(): number {
    return this.qemu?.pid ?? -1;
  }
  get running(): boolean {
    return !this.off;
  }
  get exited(): Promise<number | null> {
    return this.qemu?.exited ?? Promise.resolve(null);
  }

  serialSize(): Promise<number> {
    return serialSize(this.spec.serialLog);
  }

  serial(from = 0): Promise<string> {
    return readSerial(this.spec.serialLog, from);
  }

  async waitFor(pattern: RegExp, options: WaitOptions): Promise<RegExpExecArray> {
    try {
      return await waitForSerial(this.spec.serialLog, pattern, {
        ...options,
        name: this.name,
        stopped: () => this.off,
        starvedMs: () => runQueueWaitMs(this.pid),
      });
    } catch (e) {
      const vm = { qmpSocket: this.spec.qmpSocket, disk: this.spec.disk, on: !this.off };
      throw await explainSilence(e, vm);
    }
  }

  async reset(): Promise<void> {
    await qmpExecute(this.spec.qmpSocket, 'system_reset');
  }

  async powerCut(): Promise<void> {
    const q = this.qemu;
    if (q === undefined || this.off) return;
    process.kill(q.pid, 'SIGKILL');
    await q.exited;
  }

  async powerOn(): Promise<void> {
    if (!this.off)
      throw new MoltError(
        ErrorCode.VmFailed,
        `VM ${this.name} is already on (QEMU PID ${this.pid})`,
      );
    await rm(this.spec.qmpSocket, { force: true });
    this.powerOns += 1;
    await appendFile(this.spec.serialLog, `\n=== molt vm: power on ${this.powerOns} ===\n`);
    const qemu = startProcess(`qemu ${this.name}`, 'qemu-system-x86_64', qemuArgs(this.spec), {
      logFile: join(this.dir, 'qemu.log'),
    });
    this.qemu = qemu;
    this.off = false;
    void qemu.exited.then(() => {
      if (this.qemu === qemu) this.off = true;
    });
    await monitorUp(this.name, qemu, this.spec.qmpSocket);
  }

  async shutdown(deadlineMs = 30_000): Promise<boolean> {
    const q = this.qemu;
    if (q === undefined || this.off) return true;
    await qmpExecute(this.spec.qmpSocket, 'system_powerdown').catch(() => undefined);
    const timer = new AbortController();
    const byItself = await Promise.race([
      q.exited.then(() => true),
      sleep(deadlineMs, false, { signal: timer.signal }).catch(() => true),
    ]);
    timer.abort(); // else the timer keeps the process alive for the whole deadline
    if (!byItself) await this.powerCut();
    return byItself;
  }

  async stop(): Promise<void> {
    if (this.qemu === undefined || this.off) return;
    await this.qemu.stop(3_000);
  }
}
