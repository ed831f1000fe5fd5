// SPDX-License-Identifier: Apache-2.0
/**
 * A small JSON record the agent keeps on STATE (its hold, its pinned images, its control-plane
 * components): replaced atomically (`atomic-write.ts`), so a power cut leaves the old record or
 * the new one, and read back through its schema.
 */
import { readFile } from 'node:fs/promises';
import type { z } from 'zod';
import { ErrorCode, MoltError } from '../../../core/errors.ts';
import { writeFileAtomic } from './atomic-write.ts';

/** What a refusal of an unreadable record says. */
export interface UnreadableRecord {
  readonly message: string;
  readonly hint: string;
}

/**
 * The record at `path` as `schema` reads it; undefined when there is none. One that is not JSON or
 * not of the schema is MOLT_MACHINE_INVALID: written by rename, a record is never torn, so someone
 * else wrote that file.
 */
export async function readJsonRecord<T>(
  path: string,
  schema: z.ZodType<T>,
  unreadable: UnreadableRecord,
): Promise<T | undefined> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    raw = error;
  }
  const parsed = schema.safeParse(raw);
  if (parsed.success) return parsed.data;
  throw new MoltError(ErrorCode.MachineInvalid, unreadable.message, {
    hint: unreadable.hint,
    cause: raw instanceof Error ? raw : parsed.error,
  });
}

/** Replace the record at `path` with `record`, atomically (parents created). */
export async function writeJsonRecord(path: string, record: unknown): Promise<void> {
  await writeFileAtomic(path, `${JSON.stringify(record, null, 2)}\n`);
}
