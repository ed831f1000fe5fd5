// SPDX-License-Identifier: Apache-2.0
/**
 * `molt lab kubectl ARGS…`: the lab's kubectl (built with its control plane) on the lab's admin
 * kubeconfig, so a newcomer drives the lab's cluster — `apply` a Pool, `get molt`, `edit pool
 * workers` — without kubectl on the PATH and without exporting KUBECONFIG. Everything
 * after `kubectl` is kubectl's; the lab is the one in `MOLT_LAB_DIR`, else `.molt/lab`. kubectl
 * runs on this terminal (an editor opens for `edit`) and its exit code is molt's.
 */
import { spawn } from 'node:child_process';
import { join, resolve } from 'node:path';
import { ErrorCode, MoltError } from '../core/errors.ts';
import { defaultLabDir } from './commands.ts';
import type { LabIo } from './io.ts';
import { requireLab } from './state.ts';

export async function labKubectl(args: readonly string[], io: LabIo): Promise<number> {
  const env = io.env ?? process.env;
  const dir = resolve(env['MOLT_LAB_DIR'] ?? defaultLabDir());
  const s = await requireLab(dir);
  if (s.kubectl === undefined || s.kubeconfig === undefined)
    throw new MoltError(ErrorCode.BadFlag, `the lab in ${dir} runs without Kubernetes`, {
      hint: 'start it again without --no-kubernetes: molt lab down; molt lab up',
    });
  const child = spawn(s.kubectl, ['--kubeconfig', s.kubeconfig, ...args], {
    stdio: 'inherit',
    // kubectl's discovery cache is keyed by host:port, which a new lab may reuse: its own cache.
    env: { ...env, KUBECACHEDIR: join(s.dir, 'kube-cache') },
  });
  return new Promise((done, fail) => {
    child.once('error', fail);
    child.once('exit', (code, signal) => {
      done(code ?? (signal === null ? 1 : 128));
    });
  });
}
