// SPDX-License-Identifier: Apache-2.0
/**
 * The machine's hold on disk (docs/adr/0004 §11): `state/hold.json`, replaced atomically (temp,
 * fsync, rename, fsync the directory) and removed durably when the hold is cleared, so a hold
 * outlives agent restarts, reboots and power cuts exactly as the journal beside it does.
 */
import { readFile, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { ErrorCode, MoltError } from '../../../core/errors.ts';
import { HoldView } from '../../../protocol/agent-hold.ts';
import type { HoldStore } from '../../ports/hold-store.ts';
import { fsyncDir, writeFileAtomic } from '../fs/atomic-write.ts';

/** The file of the hold under the machine root. */
export const holdPath = (root: string): string => join(root, 'state', 'hold.json');

export function createFsHoldStore(root: string): HoldStore {
  const path = holdPath(root);
  return {
    async load() {
      let text: string;
      try {
        text = await readFile(path, 'utf8');
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
        throw error;
      }
      return parseHold(text, path);
    },
    async save(hold) {
      if (hold !== undefined) {
        await writeFileAtomic(path, `${JSON.stringify(hold, null, 2)}\n`);
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

function parseHold(text: string, path: string): HoldView {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    raw = error;
  }
  const parsed = HoldView.safeParse(raw);
  if (parsed.success) return parsed.data;
  // Written by rename, so never torn: someone else wrote this file.
  throw new MoltError(ErrorCode.MachineInvalid, `the machine's hold ${path} is unreadable`, {
    hint: 'fix the file, or delete it to release the machine; then start the agent again',
    cause: raw instanceof Error ? raw : parsed.error,
  });
}
