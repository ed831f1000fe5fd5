// SPDX-License-Identifier: Apache-2.0
/**
 * A GPT disk image with molt's five partitions (docs/real-machines.md §1), made with the real
 * `sfdisk`, and the slot partitions as regions of it (offset and size from `sfdisk --json`): what
 * the block-device slot store writes in tests and in benchmark P5, without a loop device.
 */
import { execFile } from 'node:child_process';
import { truncate, writeFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import type { Partition } from '../agent/adapters/block-slot-store/index.ts';
import type { SlotId } from '../core/slots/slot.ts';

const run = promisify(execFile);
const MiB = 1024 * 1024;
/** GPT type of a Linux root partition (x86-64), as the installer writes it. */
const rootType = '4F68BCE3-E8CD-4DB1-96E7-FBCAF984B709';

export interface DiskImage {
  readonly path: string;
  readonly slots: Readonly<Record<SlotId, Required<Partition>>>;
}

interface SfdiskJson {
  readonly partitiontable: {
    readonly sectorsize?: number;
    readonly partitions: readonly { start: number; size: number; name?: string }[];
  };
}

/** Make a disk image at `path` whose slots hold `slotMiB` MiB each. */
export async function makeDiskImage(path: string, slotMiB: number): Promise<DiskImage> {
  await writeFile(path, '');
  await truncate(path, (1 + 2 + 2 * slotMiB + 1 + 2 + 1) * MiB);
  const table = [
    'label: gpt',
    'size=2MiB, type=uefi, name=molt-esp',
    `size=${slotMiB}MiB, type=${rootType}, name=molt-a`,
    `size=${slotMiB}MiB, type=${rootType}, name=molt-b`,
    'size=1MiB, type=linux, name=molt-state',
    'type=linux, name=molt-ephemeral',
  ].join('\n');
  const sfdisk = run('sfdisk', ['--quiet', '--no-reread', '--no-tell-kernel', path]);
  sfdisk.child.stdin?.end(`${table}\n`);
  await sfdisk;
  const { stdout } = await run('sfdisk', ['--json', path]);
  const json = JSON.parse(stdout) as SfdiskJson;
  const sector = json.partitiontable.sectorsize ?? 512;
  const slot = (name: string): Required<Partition> => {
    const p = json.partitiontable.partitions.find((x) => x.name === name);
    if (p === undefined) throw new Error(`sfdisk made no partition ${name}`);
    return { path, offset: p.start * sector, size: p.size * sector };
  };
  return { path, slots: { A: slot('molt-a'), B: slot('molt-b') } };
}
