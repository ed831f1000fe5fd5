// SPDX-License-Identifier: Apache-2.0
/**
 * A molt disk image for booting a built OS image directly (docs/real-machines.md §1), made the
 * way the installer makes one and without loop devices: the GPT with sfdisk, the ESP with
 * `mkfs.vfat --offset`, slot A written raw at its offset, STATE and EPHEMERAL with
 * `mke2fs -d -E offset=`. The installer itself (src/image/install) is tested elsewhere; this is the
 * least a direct kernel boot needs.
 */
import { execFile } from 'node:child_process';
import { stat, truncate, writeFile } from 'node:fs/promises';
import { promisify } from 'node:util';

const run = promisify(execFile);
const MiB = 1024 * 1024;
const Sector = 512;

const Types = {
  esp: 'C12A7328-F81F-11D2-BA4B-00A0C93EC93B',
  root: '4F68BCE3-E8CD-4DB1-96E7-FBCAF984B709',
  linux: '0FC63DAF-8483-4772-8E79-3D69D8477DE4',
} as const;

export interface DiskLayout {
  /** Partition sizes in MiB. */
  readonly espMiB: number;
  readonly slotMiB: number;
  readonly stateMiB: number;
  readonly ephemeralMiB: number;
}

interface Part {
  readonly name: string;
  readonly type: string;
  readonly startMiB: number;
  readonly sizeMiB: number;
}

/** The five partitions, each on a 1 MiB boundary, in the contract's order. */
export function partitions(l: DiskLayout): Part[] {
  const specs: [string, string, number][] = [
    ['molt-esp', Types.esp, l.espMiB],
    ['molt-a', Types.root, l.slotMiB],
    ['molt-b', Types.root, l.slotMiB],
    ['molt-state', Types.linux, l.stateMiB],
    ['molt-ephemeral', Types.linux, l.ephemeralMiB],
  ];
  let next = 1;
  return specs.map(([name, type, sizeMiB]) => {
    const part = { name, type, startMiB: next, sizeMiB };
    next += sizeMiB;
    return part;
  });
}

function sfdisk(disk: string, script: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = execFile('sfdisk', ['-q', disk], (err, _out, stderr) => {
      if (err) reject(new Error(`sfdisk failed: ${stderr}`));
      else resolve();
    });
    child.stdin?.end(script);
  });
}

/** Write `disk` (sparse): GPT, ESP, slot A = `rootfs`, STATE from `stateDir`, empty EPHEMERAL. */
export async function makeDisk(
  disk: string,
  o: { layout: DiskLayout; rootfs: string; stateDir: string },
): Promise<void> {
  const parts = partitions(o.layout);
  const last = parts.at(-1);
  if (last === undefined) throw new Error('no partitions');
  await writeFile(disk, '');
  await truncate(disk, (last.startMiB + last.sizeMiB + 1) * MiB);
  const lines = parts.map(
    (p) =>
      `start=${(p.startMiB * MiB) / Sector}, size=${(p.sizeMiB * MiB) / Sector}, type=${p.type}, name="${p.name}"`,
  );
  await sfdisk(disk, `label: gpt\n${lines.join('\n')}\n`);
  const [esp, a, , state, ephemeral] = parts;
  if (esp === undefined || a === undefined || state === undefined || ephemeral === undefined)
    throw new Error('layout');
  if ((await stat(o.rootfs)).size > a.sizeMiB * MiB)
    throw new Error('rootfs.img is larger than a slot');
  await run('mkfs.vfat', [
    '-F',
    '32',
    '-n',
    'MOLT-ESP',
    '--offset',
    String((esp.startMiB * MiB) / Sector),
    disk,
    String(esp.sizeMiB * 1024),
  ]);
  await run('dd', [
    `if=${o.rootfs}`,
    `of=${disk}`,
    'bs=1M',
    `seek=${a.startMiB}`,
    'conv=notrunc,sparse',
    'status=none',
  ]);
  const ext4 = (label: string, p: Part, dir?: string): Promise<unknown> =>
    run('mke2fs', [
      '-q',
      '-F',
      '-t',
      'ext4',
      '-L',
      label,
      '-E',
      `offset=${p.startMiB * MiB}`,
      ...(dir === undefined ? [] : ['-d', dir]),
      disk,
      `${p.sizeMiB * 1024}k`,
    ]);
  await ext4('molt-state', state, o.stateDir);
  await ext4('molt-ephemeral', ephemeral);
}
