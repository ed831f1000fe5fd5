// SPDX-License-Identifier: Apache-2.0
/**
 * Which pinned images are the agent's (docs/adr/0015 §7) on STATE:
 * `state/kubernetes/pinned.json`, replaced atomically (temp, fsync, rename), so a power cut leaves
 * the old record or the new one.
 */
import { join } from 'node:path';
import { z } from 'zod';
import type { PinnedRecordStore } from '../../ports/image-pins.ts';
import { readJsonRecord, writeJsonRecord } from '../fs/json-record.ts';

/** The record under the machine root. */
export const pinnedRecordPath = (root: string): string =>
  join(root, 'state', 'kubernetes', 'pinned.json');

const Record = z.strictObject({ wanted: z.array(z.string()), ours: z.array(z.string()) });

export function createFsPinnedRecord(root: string): PinnedRecordStore {
  const path = pinnedRecordPath(root);
  return {
    load: async () =>
      (await readJsonRecord(path, Record, {
        message: `the machine's pinned images ${path} are unreadable`,
        hint: 'delete the file: the operator sends the list again, and molt then unpins nothing it did not record',
      })) ?? { wanted: [], ours: [] },
    save: (record) => writeJsonRecord(path, record),
  };
}
