// SPDX-License-Identifier: Apache-2.0
/** MachineHold objects: each the store's hold (or pin) of its machine, unless a person holds it. */
import { applyDeclaredHold } from '../../actions/machines.ts';
import { declaredHolds } from '../../decide/declared-holds.ts';
import { inputOf, type DeclaredController, type DeclaredDeps } from './controller.ts';

export function holdController(d: DeclaredDeps): DeclaredController {
  return {
    async apply(pass) {
      const held = declaredHolds(inputOf(d, pass));
      for (const h of held.changes) await applyDeclaredHold(d, h);
      return held.verdicts;
    },
  };
}
