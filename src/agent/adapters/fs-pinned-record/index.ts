// SPDX-License-Identifier: Apache-2.0
/**
 * Which pinned images are the agent's (docs/adr/0015 §7) on STATE:
 * `state/kubernetes/pinned.json`, replaced atomically (temp, fsync, rename), so a power cut leaves
 * the old record or the new one.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { ErrorCode, MoltError } from '../../../core/errors.ts';
import type { PinnedRecord, PinnedRecordStore } from '../../ports/image-pins.ts';
import { writeFileAtomic } from '../fs/atomic-write.ts';

/** The record under the machine root. */
export const pinnedRecordPath = (root: string): string =>
  join(root, 'state', 'kubernetes', 'pinned.json');

const Record = z.strictObject({ wanted: z.array(z.string()), ours: z.array(z.string()) });

export function createFsPinnedRecord(root: string): PinnedRecordStore {
  const path = pinnedRecordPath(root);
  return {
    async load() {
      let text: string;
      try {
        text = await readFile(path, 'utf8');
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { wanted: [], ours: [] };
        throw error;
      }
      return parse(text, path);
    },
    save: (record) => writeFileAtomic(path, `${JSON.stringify(record, null, 2)}\n`),
  };
}

function parse(text: string, path: string): PinnedRecord {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    raw = error;
  }
  const parsed = Record.safeParse(raw);
  if (parsed.success) return parsed.data;
  // Written by rename, so never torn: someone else wrote this file.
  throw new MoltError(
    ErrorCode.MachineInvalid,
    `the machine's pinned images ${path} are unreadable`,
    {
      hint: 'delete the file: the operator sends the list again, and molt then unpins nothing it did not record',
      cause: raw instanceof Error ? raw : parsed.error,
    },
  );
}
