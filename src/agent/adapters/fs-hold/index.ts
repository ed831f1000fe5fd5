// SPDX-License-Identifier: Apache-2.0
/**
 * The machine's hold on disk (docs/adr/0004 §11): `state/hold.json`, replaced atomically (temp,
 * fsync, rename, fsync the directory) and removed durably when the hold is cleared, so a hold
 * outlives agent restarts, reboots and power cuts exactly as the journal beside it does.
 */
import { rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { HoldView } from '../../../protocol/agent-hold.ts';
import type { HoldStore } from '../../ports/hold-store.ts';
import { fsyncDir } from '../fs/atomic-write.ts';
import { readJsonRecord, writeJsonRecord } from '../fs/json-record.ts';

/** The file of the hold under the machine root. */
export const holdPath = (root: string): string => join(root, 'state', 'hold.json');

export function createFsHoldStore(root: string): HoldStore {
  const path = holdPath(root);
  return {
    load: () =>
      readJsonRecord(path, HoldView, {
        message: `the machine's hold ${path} is unreadable`,
        hint: 'fix the file, or delete it to release the machine; then start the agent again',
      }),
    async save(hold) {
      if (hold !== undefined) {
        await writeJsonRecord(path, hold);
        return;
      }
      await rm(path, { force: true });
      await fsyncDir(dirname(path)).catch((error: unknown) => {
        // No state directory: there was no hold to remove.
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      });
    },
  };
}
