// SPDX-License-Identifier: Apache-2.0
/**
 * Crash injection for the lab's crash tests: a spec `<Phase>:<before|after>[:power]` kills the
 * agent (SIGKILL) right before the commands of that phase run or right after they finished;
 * `:power` asks the firmware for a power cut instead (everything stops, the machine boots again).
 * The spec comes from `MOLT_LAB_FAULT` or the file `state/lab-fault` (read at every phase, so a
 * test can arm a new fault on a running machine). Each spec fires once per machine: a marker in
 * `state/` keeps the restarted agent from dying again at the same point.
 */
import { access, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { LabEnv, LabExit } from '../../../protocol/agent.ts';
import type { FaultPoints } from '../../machine/ports.ts';

export const noFaults: FaultPoints = { at: () => Promise.resolve() };

const exists = (path: string): Promise<boolean> =>
  access(path).then(
    () => true,
    () => false,
  );

export function labFaultFile(root: string): string {
  return join(root, 'state', 'lab-fault');
}

export function createLabFaults(root: string, env: NodeJS.ProcessEnv = process.env): FaultPoints {
  const fromEnv = env[LabEnv.Fault];
  return {
    async at(current, moment) {
      const spec = fromEnv ?? (await readFile(labFaultFile(root), 'utf8').catch(() => '')).trim();
      if (spec === '') return;
      const [phase, when, mode] = spec.split(':');
      if (current !== phase || moment !== when) return;
      const marker = join(root, 'state', `fault-fired-${spec.replaceAll(':', '-')}`);
      if (await exists(marker)) return;
      await mkdir(join(root, 'state'), { recursive: true });
      await writeFile(marker, new Date().toISOString());
      if (mode === 'power') process.exit(LabExit.PowerCut);
      process.kill(process.pid, 'SIGKILL');
    },
  };
}
