// SPDX-License-Identifier: Apache-2.0
// Lab machines for end-to-end tests: src/lab/fleet/machine.ts running this checkout's molt, plus
// what only tests look at.
import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import type { AgentEvent } from '../../../src/protocol/agent.ts';

import {
  startLabMachine as startMachine,
  type LabMachine,
  type LabMachineOptions,
} from '../../../src/lab/fleet/machine.ts';
import { moltArgv } from '../../../src/testkit/molt-entry.ts';

export {
  createFleetPki,
  type FleetPki,
  type LabMachine,
  type LabMachineOptions,
} from '../../../src/lab/fleet/machine.ts';
export { moltArgv, moltEntry } from '../../../src/testkit/molt-entry.ts';

/** A lab machine running this checkout's molt (`molt` may still be given). */
export function startLabMachine(
  o: Omit<LabMachineOptions, 'molt'> & { readonly molt?: readonly string[] },
): LabMachine {
  return startMachine({ ...o, molt: o.molt ?? moltArgv });
}

/**
 * Every file and directory under `dirs` of `root`, relative path → sha256 of the content (`dir`
 * for a directory): two equal snapshots mean nothing was written, renamed or left behind there.
 */
export async function snapshotTree(
  root: string,
  dirs: readonly string[],
): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const dir of dirs) {
    const entries = await readdir(join(root, dir), { recursive: true, withFileTypes: true });
    for (const e of entries) {
      const path = join(e.parentPath, e.name);
      out[relative(root, path)] = e.isDirectory()
        ? 'dir'
        : createHash('sha256')
            .update(await readFile(path))
            .digest('hex');
    }
  }
  return Object.fromEntries(Object.entries(out).sort(([a], [b]) => a.localeCompare(b)));
}

/** The events `molt node … -o json` printed, one JSON object a line. */
export function parseEvents(stdout: string): AgentEvent[] {
  return stdout
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as AgentEvent);
}
