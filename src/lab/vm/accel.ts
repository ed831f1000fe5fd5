// SPDX-License-Identifier: Apache-2.0
/**
 * KVM or TCG. `/dev/kvm` being there is not enough: on some hosts (nested virtualisation, the
 * machines molt is developed on) KVM starts and then fails in OVMF's first instructions ("KVM
 * internal error … emulation failure"), and QEMU does not exit: it pauses, which looks exactly
 * like a hung machine. So `auto` really boots the firmware once under KVM and uses KVM only if
 * OVMF reaches its boot manager on the serial console; anything else — no device, no answer in
 * time, an error — means TCG, which is slow but always works. The answer is cached per host boot
 * (keyed by the kernel's boot id) in the temp dir, so the probe costs ~1–2 s once. `MOLT_VM_ACCEL`
 * (`kvm`, `tcg` or `auto`) overrides it.
 */
import { constants } from 'node:fs';
import { access, copyFile, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ErrorCode, MoltError } from '../../core/errors.ts';
import { startProcess, tempDir } from '../../platform/process/managed-process.ts';
import { OvmfCode, OvmfVarsTemplate, type Accel } from './qemu-args.ts';
import { waitForSerial } from './serial-log.ts';

export type AccelChoice = Accel | 'auto';

const ProbeDeadlineMs = 15_000;
const cacheFile = (): string => join(tmpdir(), 'molt-vm-accel.json');

/** Parse `MOLT_VM_ACCEL` (or an option) into a choice. */
export function parseAccel(value: string | undefined, fallback: AccelChoice = 'auto'): AccelChoice {
  if (value === undefined || value === '') return fallback;
  if (value === 'kvm' || value === 'tcg' || value === 'auto') return value;
  throw new MoltError(
    ErrorCode.BadInput,
    `MOLT_VM_ACCEL must be kvm, tcg or auto, not ${JSON.stringify(value)}`,
  );
}

async function bootId(): Promise<string> {
  return (await readFile('/proc/sys/kernel/random/boot_id', 'utf8').catch(() => '')).trim();
}

/** One short KVM run of the bare firmware: true when OVMF reaches its boot manager. */
async function probeKvm(): Promise<boolean> {
  const usable = await access('/dev/kvm', constants.R_OK | constants.W_OK).then(
    () => true,
    () => false,
  );
  if (!usable) return false;
  const dir = await tempDir('kvm-probe');
  const serial = join(dir.path, 'serial.log');
  const vars = join(dir.path, 'vars.fd');
  await copyFile(OvmfVarsTemplate, vars);
  const qemu = startProcess('qemu (KVM probe)', 'qemu-system-x86_64', [
    ...['-machine', 'q35', '-accel', 'kvm', '-cpu', 'host', '-m', '256', '-nodefaults'],
    ...['-display', 'none', '-serial', `file:${serial}`],
    ...['-drive', `if=pflash,format=raw,unit=0,readonly=on,file=${OvmfCode}`],
    ...['-drive', `if=pflash,format=raw,unit=1,file=${vars}`],
  ]);
  const failed = (): boolean => /KVM internal error|failed to initialize kvm/i.test(qemu.output());
  let exited = false;
  void qemu.exited.then(() => (exited = true));
  try {
    await waitForSerial(serial, /BdsDxe/, {
      name: 'kvm-probe',
      deadlineMs: ProbeDeadlineMs,
      stopped: () => exited || failed(),
    });
    return true;
  } catch {
    return false;
  } finally {
    await qemu.stop(1_000);
    await dir.remove();
  }
}

let memo: Promise<Accel> | undefined;

async function probeCached(): Promise<Accel> {
  const id = await bootId();
  const none: { bootId?: string; accel?: Accel } = {};
  const cached = await readFile(cacheFile(), 'utf8')
    .then((t) => JSON.parse(t) as typeof none)
    .catch(() => none);
  if (id !== '' && cached.bootId === id && (cached.accel === 'kvm' || cached.accel === 'tcg'))
    return cached.accel;
  const accel: Accel = (await probeKvm()) ? 'kvm' : 'tcg';
  await writeFile(cacheFile(), `${JSON.stringify({ bootId: id, accel })}\n`).catch(() => undefined);
  return accel;
}

/** The accelerator to use for `choice` (`MOLT_VM_ACCEL` wins over the option). */
export async function resolveAccel(choice: AccelChoice = 'auto'): Promise<Accel> {
  const chosen = parseAccel(process.env['MOLT_VM_ACCEL'], choice);
  if (chosen !== 'auto') return chosen;
  memo ??= probeCached();
  return memo;
}
