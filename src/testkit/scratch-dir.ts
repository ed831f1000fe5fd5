// SPDX-License-Identifier: Apache-2.0
/**
 * Temporary directories for tests that make many (a conformance suite's one per case): each is
 * removed when the test process exits, so a suite leaves nothing in /tmp however it ends short of
 * a kill.
 */
import { rmSync } from 'node:fs';
import { tempDir } from '../platform/process/managed-process.ts';

const made: string[] = [];

function removeAll(): void {
  for (const path of made.splice(0)) rmSync(path, { recursive: true, force: true });
}

/** A new directory under the system's temporary directory, gone when this process exits. */
export async function scratchDir(prefix: string): Promise<string> {
  const { path } = await tempDir(prefix);
  if (made.length === 0) process.once('exit', removeAll);
  made.push(path);
  return path;
}
