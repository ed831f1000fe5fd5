// SPDX-License-Identifier: Apache-2.0
/**
 * `<lab dir>/lab.json`: what a running lab is made of (written by the lab daemon once everything
 * is up, read by `molt lab status|env|down|publish`). Written atomically (rename) so a reader never
 * sees half a file.
 */
import { readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { ErrorCode, MoltError } from '../core/errors.ts';

export const LabState = z.object({
  pid: z.number().int(),
  state: z.enum(['starting', 'ready', 'failed']),
  startedAt: z.string(),
  dir: z.string(),
  registry: z.string(),
  repository: z.string(),
  operator: z.object({ api: z.string(), dashboard: z.string() }),
  /** The fleet CA and the operator's client certificate (what `molt lab env` points at). */
  pki: z.string(),
  /** Loopback ports, or a bridge with a namespace per machine (lab/fleet/network.ts). */
  network: z
    .object({
      mode: z.enum(['loopback', 'netns']),
      bridge: z.string().optional(),
      subnet: z.string().optional(),
      namespaces: z.array(z.string()).optional(),
    })
    .optional(),
  /** The admin kubeconfig, when the lab runs Kubernetes. */
  kubeconfig: z.string().optional(),
  /** kubectl, built with the control plane. */
  kubectl: z.string().optional(),
  machines: z.array(
    z.object({ id: z.string(), role: z.string(), pool: z.string(), endpoint: z.string() }),
  ),
});
export type LabState = z.infer<typeof LabState>;

export const labFile = (dir: string): string => join(dir, 'lab.json');

export async function writeLabState(dir: string, state: LabState): Promise<void> {
  const file = labFile(dir);
  await writeFile(`${file}.tmp`, `${JSON.stringify(state, null, 2)}\n`);
  await rename(`${file}.tmp`, file);
}

export async function removeLabState(dir: string): Promise<void> {
  await rm(labFile(dir), { force: true });
}

/** The running lab in `dir`, or undefined when there is none (no file, or its daemon is gone). */
export async function readLabState(dir: string): Promise<LabState | undefined> {
  const text = await readFile(labFile(dir), 'utf8').catch(() => undefined);
  if (text === undefined) return undefined;
  const parsed = LabState.safeParse(JSON.parse(text));
  if (!parsed.success)
    throw new MoltError(ErrorCode.BadInput, `${labFile(dir)} is not a lab state file`, {
      hint: 'remove it, or pass --dir to a lab directory',
    });
  return alive(parsed.data.pid) ? parsed.data : undefined;
}

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The running lab in `dir`; MOLT_LAB_NOT_RUNNING with a hint when there is none. */
export async function requireLab(dir: string): Promise<LabState> {
  const state = await readLabState(dir);
  if (state === undefined)
    throw new MoltError(ErrorCode.LabNotRunning, `no lab is running in ${dir}`, {
      hint: 'start one with `molt lab up` (or pass --dir)',
    });
  return state;
}
