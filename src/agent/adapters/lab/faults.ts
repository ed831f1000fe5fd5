// SPDX-License-Identifier: Apache-2.0
/**
 * Crash injection for the lab's crash tests: `MOLT_LAB_FAULT=<Phase>:<before|after>[:power]`
 * kills the agent (SIGKILL) right before the commands of that phase run or right after they
 * finished, once per machine (a marker in `state/` keeps the restarted agent from dying again).
 * `:power` asks the firmware for a power cut instead (the whole machine stops and boots again).
 */
import { access, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { LabEnv, LabExit } from '../../../protocol/agent.ts';

export interface FaultPoints {
  at(phase: string, when: 'before' | 'after'): Promise<void>;
}

export const noFaults: FaultPoints = { at: () => Promise.resolve() };

export function createLabFaults(root: string, env: NodeJS.ProcessEnv = process.env): FaultPoints {
  const spec = env[LabEnv.Fault];
  if (spec === undefined || spec === '') return noFaults;
  const [phase, when, mode] = spec.split(':');
  const marker = join(root, 'state', `fault-fired-${spec.replaceAll(':', '-')}`);
  return {
    async at(current, moment) {
      if (current !== phase || moment !== when) return;
      if (await access(marker).then(() => true, () => false)) return;
      await mkdir(join(root, 'state'), { recursive: true });
      await writeFile(marker, new Date().toISOString());
      if (mode === 'power') process.exit(LabExit.PowerCut);
      process.kill(process.pid, 'SIGKILL');
    },
  };
}
