// SPDX-License-Identifier: Apache-2.0
/** `molt install`: flags → {@link installDisk} → a plan table for people, or JSON (docs/install.md). */
import { parseArgs } from 'node:util';
import { MiB, type DiskPlan } from '../../core/disk/layout.ts';
import { formatSize, parseSize } from '../../core/disk/size.ts';
import { ErrorCode, MoltError } from '../../core/errors.ts';
import { installDisk, type InstallOptions, type InstallResult } from './install-disk.ts';
import { Bootloaders, isBootloader } from '../../core/boot/bootloaders.ts';
import { optionLines, parseOptions } from '../../protocol/flags.ts';
import { InstallFlags } from '../../protocol/process-flags/install.ts';

interface Io {
  out(text: string): void;
  err(text: string): void;
}

export const installUsage = `Usage: molt install --disk FILE|DEVICE --image REF --config FILE --pki DIR [options]

Installs molt onto a disk image file or a block device (docs/install.md): a GPT with molt-esp,
molt-a, molt-b, molt-state and molt-ephemeral; the bootloader at EFI/BOOT/BOOTX64.EFI; the image in
slot A (committed); STATE with the machine config and PKI; an empty EPHEMERAL. Every check runs
before the first write: on bad input the disk is left as it was.

${optionLines(InstallFlags)}
`;

function bad(message: string): MoltError {
  return new MoltError(ErrorCode.BadFlag, message, { hint: 'molt install --help lists the flags' });
}

function flags(argv: readonly string[]) {
  try {
    return parseArgs({
      args: [...argv],
      options: parseOptions(InstallFlags),
      strict: true,
      allowPositionals: false,
    }).values;
  } catch (error) {
    throw bad((error as Error).message);
  }
}

function required(values: Record<string, unknown>, name: string): string {
  const v = values[name];
  if (typeof v !== 'string' || v === '') throw bad(`--${name} is required`);
  return v;
}

function optionsOf(values: ReturnType<typeof flags>, log: (line: string) => void): InstallOptions {
  const { bootloader } = values;
  if (bootloader !== undefined && !isBootloader(bootloader))
    throw bad(
      `--bootloader must be ${Bootloaders.join(' or ')}, not ${JSON.stringify(bootloader)}`,
    );
  const size = (name: 'slot-size' | 'esp-size' | 'state-size' | 'disk-size') =>
    values[name] === undefined ? undefined : parseSize(values[name], `--${name}`);
  const [slot, esp, state, diskBytes] = [
    size('slot-size'),
    size('esp-size'),
    size('state-size'),
    size('disk-size'),
  ];
  return {
    disk: required(values, 'disk'),
    image: required(values, 'image'),
    config: required(values, 'config'),
    pki: required(values, 'pki'),
    ...(bootloader !== undefined && { bootloader }),
    sizes: {
      ...(slot !== undefined && { slot }),
      ...(esp !== undefined && { esp }),
      ...(state !== undefined && { state }),
    },
    ...(diskBytes !== undefined && { diskBytes }),
    wipe: values.wipe,
    overwriteMachine: values['overwrite-machine'],
    insecure: values.insecure,
    dryRun: values['dry-run'],
    ...filesOf(values),
    log,
  };
}

/** The optional files an install takes from this host. */
function filesOf(values: ReturnType<typeof flags>) {
  return {
    ...(values['efi-binary'] !== undefined && { efiBinary: values['efi-binary'] }),
    ...(values['public-key'] !== undefined && { publicKey: values['public-key'] }),
    ...(values.kubeconfig !== undefined && { kubeconfig: values.kubeconfig }),
    ...(values['kube-pki'] !== undefined && { kubePki: values['kube-pki'] }),
    ...(values['work-dir'] !== undefined && { workDir: values['work-dir'] }),
  };
}

/** The plan as a table: number, name, start and size in MiB, type of filesystem. */
export function formatPlan(plan: DiskPlan): string {
  const rows = plan.partitions.map(
    (p) =>
      `  ${String(p.number)}  ${p.name.padEnd(15)} ${String(p.offset / MiB).padStart(7)} MiB  ${formatSize(p.size).padStart(10)}  ${p.filesystem}`,
  );
  return [`  #  name            start        size       content`, ...rows].join('\n');
}

function previousText(r: InstallResult): string {
  switch (r.previous) {
    case 'molt':
      return ", over molt's layout with an empty STATE";
    case 'machine':
      return `, replacing the machine ${r.previousNode ?? '(node unknown)'} (--overwrite-machine)`;
    case 'foreign':
      return ', replacing what was there (--wipe)';
    case 'empty':
      return '';
  }
}

function summary(r: InstallResult): string {
  const verb = r.dryRun ? 'would install' : 'installed';
  const previous = previousText(r);
  return (
    `${verb} ${r.image.version} (${r.image.digest}) for ${r.node} onto ${r.disk} (${formatSize(r.plan.diskBytes)}, ${r.kind})${previous}\n` +
    `bootloader ${r.bootloader} at EFI/BOOT/BOOTX64.EFI; slot A committed\n${formatPlan(r.plan)}\n` +
    (r.dryRun
      ? 'dry run: nothing was written\n'
      : `done in ${(r.durationMs / 1000).toFixed(1)} s\n`)
  );
}

export async function runInstall(argv: readonly string[], io: Io): Promise<number> {
  const values = flags(argv);
  if (values.help) {
    io.out(installUsage);
    return 0;
  }
  const json = values.json;
  const result = await installDisk(
    optionsOf(values, (line) => {
      if (!json) io.err(`molt install: ${line}\n`);
    }),
  );
  io.out(json ? `${JSON.stringify(result, null, 2)}\n` : summary(result));
  return 0;
}
