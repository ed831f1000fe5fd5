// SPDX-License-Identifier: Apache-2.0
/**
 * VMs as lab machines: started in `<lab dir>/vms/<name>/` with the agent's port forwarded to a
 * free port on 127.0.0.1, recorded in `lab.json` (name, PID, directory, console log, agent port),
 * so `molt lab status` shows them with their console and `molt lab down` stops them by PID even
 * when the lab daemon that started them is gone.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { alive, readLabStateFile, writeLabState, type LabVmRecord } from '../state.ts';
import { startVm, type Vm, type VmOptions } from './vm.ts';

export interface LabVmOptions {
  readonly labDir: string;
  readonly name: string;
  /** The VM's disk (what `molt install --disk` wrote for this machine). */
  readonly disk: string;
  /** The port the agent listens on inside the guest (its machine config's `api.port`). */
  readonly agentGuestPort: number;
  readonly memoryMiB?: number;
  readonly cpus?: number;
  readonly accel?: VmOptions['accel'];
  /** A second NIC on this tap of the lab bridge. */
  readonly tap?: VmOptions['tap'];
}

export interface LabVm {
  readonly vm: Vm;
  /** What lab.json holds about it (refresh with {@link labVmRecord} after a power-on: the PID changes). */
  readonly record: LabVmRecord;
}

/** The directory of lab VM `name`. */
export const labVmDir = (labDir: string, name: string): string => join(labDir, 'vms', name);

/** What lab.json records about `vm` now. */
export function labVmRecord(vm: Vm): LabVmRecord {
  const agentPort = vm.forwards[0]?.hostPort ?? 0;
  return {
    name: vm.name,
    pid: vm.pid,
    dir: vm.dir,
    serialLog: vm.serialLog,
    accel: vm.accel,
    agentPort,
    endpoint: `https://127.0.0.1:${agentPort}`,
  };
}

/**
 * Add (or replace, by name) `record` in the lab's `lab.json`, when there is one. The lab daemon
 * writes lab.json once its machines are up, with the records of the VMs it started; this is for a
 * VM that is started or powered on again later.
 */
export async function recordLabVm(labDir: string, record: LabVmRecord): Promise<void> {
  const state = await readLabStateFile(labDir);
  if (state === undefined) return;
  const vms = (state.vms ?? []).filter((v) => v.name !== record.name);
  await writeLabState(labDir, { ...state, vms: [...vms, record] });
}

/** Start lab VM `o.name` from its disk, its agent port forwarded, and record it. */
export async function startLabVm(o: LabVmOptions): Promise<LabVm> {
  const vm = await startVm({
    name: o.name,
    dir: labVmDir(o.labDir, o.name),
    disk: o.disk,
    forwards: [{ hostPort: 0, guestPort: o.agentGuestPort }],
    ...(o.memoryMiB !== undefined && { memoryMiB: o.memoryMiB }),
    ...(o.cpus !== undefined && { cpus: o.cpus }),
    ...(o.accel !== undefined && { accel: o.accel }),
    ...(o.tap !== undefined && { tap: o.tap }),
  });
  const record = labVmRecord(vm);
  await recordLabVm(o.labDir, record);
  return { vm, record };
}

/** Whether `pid` is still the QEMU of the VM in `dir` (a PID may have been reused since). */
async function isVm(pid: number, dir: string): Promise<boolean> {
  if (!alive(pid)) return false;
  const cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
  return cmdline.includes('qemu-system') && cmdline.includes(`${dir}/`);
}

/**
 * Stop the recorded VMs that still run (SIGTERM, SIGKILL after 5 s), each by its PID and only if
 * that PID is still its QEMU; returns the names of those stopped.
 */
export async function stopLabVms(vms: readonly LabVmRecord[]): Promise<string[]> {
  const stopped: string[] = [];
  for (const v of vms) {
    if (!(await isVm(v.pid, v.dir))) continue;
    process.kill(v.pid, 'SIGTERM');
    for (let i = 0; i < 50 && alive(v.pid); i++) await sleep(100);
    if (alive(v.pid)) process.kill(v.pid, 'SIGKILL');
    stopped.push(v.name);
  }
  return stopped;
}
