// SPDX-License-Identifier: Apache-2.0
/** Labelled Nodes: the machines they are, written into the store and removed with them. */
import { inventory } from '../../decide/declared-inventory.ts';
import { inputOf, type DeclaredController, type DeclaredDeps, type Once } from './controller.ts';

export function nodeController(d: DeclaredDeps, once: Once): DeclaredController {
  return {
    async apply(pass) {
      const c = inventory(inputOf(d, pass));
      for (const m of c.put) {
        await d.store.putMachine(m);
        d.log(`declared: machine ${m.id} from its Node (pool ${m.pool}, agent ${m.endpoint})`);
      }
      for (const id of c.remove) {
        await d.store.removeMachine(id);
        d.log(`declared: machine ${id} removed: its Node is gone or no longer labelled`);
      }
      for (const s of c.skipped)
        once(
          `node/${s.node}/${s.skipped}`,
          `declared: Node ${s.node} is not a machine: ${s.skipped}`,
        );
      return [];
    },
  };
}
