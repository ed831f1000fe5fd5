// SPDX-License-Identifier: Apache-2.0
/**
 * What the disk is before anything is written: a file (its size; may not exist yet) or a block
 * device (its size from sysfs), what it holds (`sfdisk --json`, and `wipefs` for a filesystem
 * written without a table; on molt's layout, what STATE holds: state-probe.ts) and who uses it
 * (mounts, swap, holders, loop devices backed by the file). Reads only; core/disk judges the facts.
 */
import { readdir, readFile, realpath, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { z } from 'zod';
import type { BlockDeviceFacts, DiskUseFacts } from '../../core/disk/in-use.ts';
import { PartitionName } from '../../core/disk/layout.ts';
import { isMoltLayout, type DiskContent } from '../../core/disk/table.ts';
import { ErrorCode, MoltError } from '../../core/errors.ts';
import { readState } from './state-probe.ts';
import { run } from './tools.ts';

export interface DiskTarget {
  /** The path as given, and resolved (symlinks such as /dev/disk/by-id followed). */
  readonly path: string;
  readonly kind: 'file' | 'block';
  /** Bytes now; 0 for a file that does not exist yet. */
  readonly bytes: number;
  readonly exists: boolean;
}

const readText = (path: string): Promise<string> => readFile(path, 'utf8').catch(() => '');

/** Resolve `path` and tell a file from a block device. */
export async function probeTarget(path: string): Promise<DiskTarget> {
  const info = await stat(path).catch((error: unknown) => {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new MoltError(ErrorCode.BadFlag, `--disk ${path}: ${(error as Error).message}`, {
      cause: error,
    });
  });
  if (info === undefined) return { path, kind: 'file', bytes: 0, exists: false };
  const real = await realpath(path);
  if (info.isFile()) return { path: real, kind: 'file', bytes: info.size, exists: true };
  if (!info.isBlockDevice())
    throw new MoltError(ErrorCode.BadFlag, `--disk ${path} is neither a file nor a block device`);
  const sectors = Number((await readText(`/sys/class/block/${basename(real)}/size`)).trim());
  if (!Number.isSafeInteger(sectors) || sectors <= 0)
    throw new MoltError(
      ErrorCode.BadFlag,
      `--disk ${path}: cannot read its size from /sys/class/block`,
    );
  return { path: real, kind: 'block', bytes: sectors * 512, exists: true };
}

const SfdiskJson = z.object({
  partitiontable: z.object({
    label: z.string(),
    sectorsize: z.number().int().positive().default(512),
    partitions: z
      .array(
        z.object({
          name: z.string().optional(),
          type: z.string(),
          start: z.number().int().nonnegative(),
          size: z.number().int().nonnegative(),
        }),
      )
      .default([]),
  }),
});
const WipefsJson = z.object({ signatures: z.array(z.object({ type: z.string() })).default([]) });

/** A table, and on molt's layout what its STATE partition holds. */
async function withState(disk: string, json: z.infer<typeof SfdiskJson>): Promise<DiskContent> {
  const table = json.partitiontable;
  const state = table.partitions.find((p) => p.name === PartitionName.State);
  if (!isMoltLayout(table) || state === undefined) return { kind: 'table', table };
  const sector = table.sectorsize;
  return {
    kind: 'table',
    table,
    state: await readState(disk, state.start * sector, state.size * sector),
  };
}

/** What the disk holds: its partition table (and STATE's content), or a bare disk's signatures. */
export async function readContent(target: DiskTarget): Promise<DiskContent> {
  if (!target.exists || target.bytes === 0) return { kind: 'bare', signatures: [] };
  // sfdisk answers 1 both for "no partition table" and for real failures; stdout tells them apart.
  const table = await run('sfdisk', ['--json', target.path], { okCodes: [1] });
  if (table.code === 0) return withState(target.path, SfdiskJson.parse(JSON.parse(table.stdout)));
  if (!/does not contain a recognized partition table/.test(table.stderr))
    throw new Error(`sfdisk --json ${target.path} failed: ${table.stderr.trim()}`);
  const signatures = await run('wipefs', ['--no-act', '--json', target.path]);
  const types =
    signatures.stdout.trim() === ''
      ? []
      : WipefsJson.parse(JSON.parse(signatures.stdout)).signatures.map((s) => s.type);
  return { kind: 'bare', signatures: [...new Set(types)] };
}

async function blockFacts(name: string): Promise<BlockDeviceFacts> {
  const dir = `/sys/class/block/${name}`;
  return {
    name,
    devNumber: (await readText(join(dir, 'dev'))).trim(),
    holders: await readdir(join(dir, 'holders')).catch(() => []),
  };
}

/** The disk and its partitions (sysfs lists a partition as a subdirectory with a `partition` file). */
async function devicesOf(disk: string): Promise<BlockDeviceFacts[]> {
  const name = basename(disk);
  const entries = await readdir(`/sys/class/block/${name}`).catch(() => []);
  const partitions: string[] = [];
  for (const entry of entries)
    if (
      entry.startsWith(name) &&
      (await readText(`/sys/class/block/${name}/${entry}/partition`)) !== ''
    )
      partitions.push(entry);
  return Promise.all([name, ...partitions.sort()].map(blockFacts));
}

/** Loop devices whose backing file is `file`. */
async function loopsBackedBy(file: string): Promise<string[]> {
  const loops: string[] = [];
  for (const name of await readdir('/sys/block').catch(() => [])) {
    if (!name.startsWith('loop')) continue;
    const backing = (await readText(`/sys/block/${name}/loop/backing_file`)).trim();
    if (backing === file) loops.push(name);
  }
  return loops;
}

/** Who uses the disk, for core's `requireUnused`. */
export async function readUse(target: DiskTarget): Promise<DiskUseFacts> {
  const [mountinfo, swaps] = await Promise.all([
    readText('/proc/self/mountinfo'),
    readText('/proc/swaps'),
  ]);
  if (target.kind === 'block')
    return { devices: await devicesOf(target.path), mountinfo, swaps, loopDevices: [] };
  return {
    devices: [],
    mountinfo,
    swaps,
    loopDevices: target.exists ? await loopsBackedBy(target.path) : [],
  };
}
