// SPDX-License-Identifier: Apache-2.0
/** In-memory {@link HoldStore} for unit tests; passes `testkit/hold-store-conformance.ts`. */
import type { HoldView } from '../../protocol/agent-hold.ts';
import type { HoldStore } from './hold-store.ts';

export function createMemoryHoldStore(): HoldStore & { readonly saves: (HoldView | undefined)[] } {
  let hold: HoldView | undefined;
  const saves: (HoldView | undefined)[] = [];
  return {
    saves,
    load: () => Promise.resolve(hold === undefined ? undefined : structuredClone(hold)),
    save(next) {
      hold = next === undefined ? undefined : structuredClone(next);
      saves.push(hold);
      return Promise.resolve();
    },
  };
}
