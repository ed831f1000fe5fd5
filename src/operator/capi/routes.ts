// SPDX-License-Identifier: Apache-2.0
/** One hook's answer from its raw body: parsed and bounded, then answered (answers.ts). */
import {
  CanUpdateMachineRequest,
  CanUpdateMachineSetRequest,
  CapiHook,
  HookApiVersion,
  UpdateMachineRequest,
} from '../../protocol/capi-hooks.ts';
import {
  canUpdateMachine,
  canUpdateMachineSet,
  parseHookBody,
  updateMachine,
  type HookDeps,
} from './answers.ts';

/** A bad body's answer: `Failure` with the hook's response kind (UpdateMachine's needs `retryAfterSeconds`). */
function invalid(hook: CapiHook, message: string): Record<string, unknown> {
  const base = { apiVersion: HookApiVersion, kind: `${hook}Response`, status: 'Failure', message };
  return hook === CapiHook.UpdateMachine ? { ...base, retryAfterSeconds: 0 } : base;
}

/** The answer to `hook` for the raw request `body`. */
export async function answerHook(hook: CapiHook, body: string, deps: HookDeps): Promise<unknown> {
  switch (hook) {
    case CapiHook.CanUpdateMachine: {
      const r = parseHookBody(CanUpdateMachineRequest, body);
      return 'ok' in r ? canUpdateMachine(r.ok, deps) : invalid(hook, r.invalid);
    }
    case CapiHook.CanUpdateMachineSet: {
      const r = parseHookBody(CanUpdateMachineSetRequest, body);
      return 'ok' in r ? canUpdateMachineSet(r.ok, deps) : invalid(hook, r.invalid);
    }
    case CapiHook.UpdateMachine: {
      const r = parseHookBody(UpdateMachineRequest, body);
      return 'ok' in r ? updateMachine(r.ok, deps) : invalid(hook, r.invalid);
    }
  }
}
