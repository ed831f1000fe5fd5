// SPDX-License-Identifier: Apache-2.0
/**
 * The VM runner (docs/adr/0008 §7): machines that boot from a disk molt installed, under QEMU
 * with OVMF, used by the lab, the demo, the tests and the benchmarks. Everything a VM owns lives
 * in its directory: `vars.fd` (its EFI variable store, made once from OVMF's template and kept
 * across resets and power-ons), `serial.log` (its console, appended across power-ons, each
 * power-on marked by a line the runner writes: `=== molt vm: power on N ===`), `qmp.sock` (its
 * monitor) and `qemu.log` (QEMU's own messages). QEMU is stopped by its PID only.
 */
import { handleWhen, retry } from 'cockatiel';
import { access, copyFile, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { ErrorCode, MoltError } from '../../core/errors.ts';
import { freePort } from '../../platform/process/free-port.ts';
import { resolveAccel } from './accel.ts';
import { OvmfCode, OvmfVarsTemplate, type PortForward, type QemuSpec } from './qemu-args.ts';
import { QemuVm } from './qemu-vm.ts';
import { readSerial } from './serial-log.ts';
import type { Vm, VmOptions } from './vm-types.ts';

export type { PortForward, Vm, VmOptions, WaitOptions } from './vm-types.ts';

const PowerOnMarker = /^=== molt vm: power on (\d+) ===$/gm;

async function prerequisites(o: VmOptions, qmpSocket: string): Promise<void> {
  for (const file of [OvmfCode, OvmfVarsTemplate, o.disk]) {
    await access(file).catch(() => {
      throw new MoltError(ErrorCode.VmFailed, `VM ${o.name}: ${file} is missing`, {
        hint:
          file === o.disk
            ? 'pass the disk image molt install wrote'
            : 'install ovmf and qemu-system-x86 (scripts/qemu-setup.sh)',
      });
    });
  }
  if (Buffer.byteLength(qmpSocket) > 107)
    throw new MoltError(
      ErrorCode.VmFailed,
      `VM ${o.name}: ${qmpSocket} is too long for a unix socket`,
      {
        hint: 'give the VM a directory with a shorter path',
      },
    );
}

async function resolveForwards(forwards: readonly PortForward[]): Promise<PortForward[]> {
  const out: PortForward[] = [];
  for (const f of forwards)
    out.push({
      guestPort: f.guestPort,
      hostPort: f.hostPort === 0 ? await freePort() : f.hostPort,
    });
  return out;
}

/** Start a VM (power-on 1, or the next one when its directory already has a log). */
export async function startVm(o: VmOptions): Promise<Vm> {
  await mkdir(o.dir, { recursive: true });
  const vars = join(o.dir, 'vars.fd');
  const serialLog = join(o.dir, 'serial.log');
  const qmpSocket = join(o.dir, 'qmp.sock');
  await prerequisites(o, qmpSocket);
  await access(vars).catch(() => copyFile(OvmfVarsTemplate, vars));
  const spec: QemuSpec = {
    name: o.name,
    accel: await resolveAccel(o.accel ?? 'auto'),
    memoryMiB: o.memoryMiB ?? 1024,
    cpus: o.cpus ?? 1,
    disk: o.disk,
    vars,
    serialLog,
    qmpSocket,
    forwards: await resolveForwards(o.forwards ?? []),
    watchdog: o.watchdog ?? true,
    noReboot: o.noReboot ?? false,
    network: o.network ?? true,
    tap: o.tap,
  };
  return powerOnFirst(o, spec);
}

/** A port freePort() found may be taken again before QEMU binds it: then pick others (3 tries). */
const TakenPort = /Could not set up host forwarding rule/;

async function powerOnFirst(o: VmOptions, spec: QemuSpec): Promise<Vm> {
  const picked = (o.forwards ?? []).some((f) => f.hostPort === 0);
  let current = spec;
  const taken = (e: Error): boolean => picked && TakenPort.test(e.message);
  return retry(handleWhen(taken), { maxAttempts: 2 }).execute(async ({ attempt }) => {
    if (attempt > 0) current = { ...current, forwards: await resolveForwards(o.forwards ?? []) };
    const count = [...(await readSerial(current.serialLog)).matchAll(PowerOnMarker)].length;
    const vm = new QemuVm(o.name, o.dir, current, count);
    await vm.powerOn();
    return vm;
  });
}
