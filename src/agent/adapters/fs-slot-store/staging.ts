// SPDX-License-Identifier: Apache-2.0
/**
 * The staging area of a slot (`esp/molt/<x>.next/`, `slots/<x>.next/`) and its record
 * `staged.json`, shared by the image source (which fills it) and the slot store (which installs
 * it). The record is written last and removed first, so a directory without it is a half pull.
 */
import { mkdir, readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { ErrorCode, MoltError } from '../../../core/errors.ts';
import { areaDir, stagedRecordPath } from '../../../core/slots/layout.ts';
import { parseStagedRecord, type StagedRecord } from '../../../core/slots/manifest.ts';
import type { SlotId } from '../../../core/slots/slot.ts';
import { fsyncDir, writeFileAtomic } from '../fs/atomic-write.ts';

/** Read and parse a JSON file under `root`; undefined when it does not exist. */
export async function readJson(root: string, path: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(join(root, path), 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (e) {
    throw new MoltError(ErrorCode.MachineInvalid, `${join(root, path)} is not valid JSON`, {
      cause: e,
    });
  }
}

/** The staged record at `path` (default: the staging area's), or undefined. */
export async function readStaged(
  root: string,
  slot: SlotId,
  path = stagedRecordPath(slot),
): Promise<StagedRecord | undefined> {
  const json = await readJson(root, path);
  return json === undefined ? undefined : parseStagedRecord(json, join(root, path));
}

/** Write `record` atomically at `path` (default: the staging area's). */
export async function writeStaged(
  root: string,
  record: StagedRecord,
  path = stagedRecordPath(record.slot),
): Promise<void> {
  await writeFileAtomic(join(root, path), `${JSON.stringify(record, null, 2)}\n`);
}

/** Remove the record, then both staging directories. */
export async function removeStaging(root: string, slot: SlotId): Promise<void> {
  await rm(join(root, stagedRecordPath(slot)), { force: true });
  for (const area of ['slot', 'esp'] as const)
    await rm(join(root, areaDir(slot, area, true)), { recursive: true, force: true });
}

/**
 * Make both staging directories exist and hold nothing but files named in `keep` (candidates for
 * reuse), with the record removed first: from here on the area is a pull in progress.
 */
export async function prepareStaging(
  root: string,
  slot: SlotId,
  keep: ReadonlySet<string>,
): Promise<void> {
  await rm(join(root, stagedRecordPath(slot)), { force: true });
  for (const area of ['slot', 'esp'] as const) {
    const dir = join(root, areaDir(slot, area, true));
    await mkdir(dir, { recursive: true });
    for (const name of await readdir(dir))
      if (!keep.has(name)) await rm(join(dir, name), { recursive: true, force: true });
  }
}

/** fsync both staging directories, so the files created in them survive a power cut. */
export async function syncStaging(root: string, slot: SlotId): Promise<void> {
  for (const area of ['slot', 'esp'] as const)
    await fsyncDir(join(root, areaDir(slot, area, true)));
}
