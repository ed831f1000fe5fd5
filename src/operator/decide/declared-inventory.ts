// SPDX-License-Identifier: Apache-2.0
/** Machines from the cluster's Nodes into the store (docs/adr/0011; `declared.ts` plans the rest). */
import { isEnded } from '../../core/rollout/vocabulary.ts';
import type { MachineRecord } from '../ports/store.ts';
import type { DeclaredInput, InventoryChanges } from './declared-types.ts';

const sameRecord = (a: MachineRecord | undefined, b: MachineRecord): boolean =>
  a !== undefined && JSON.stringify(a) === JSON.stringify(b);

/**
 * Machines from Nodes: written when new or changed (a Node the fleet file also names stays the
 * file's), removed when their Node is gone or unlabelled — but not while they are in flight in an
 * unfinished rollout (their upgrade ends first, and the Node is usually back by then).
 */
export function inventory(i: DeclaredInput): InventoryChanges {
  if (i.declared.machines === undefined) return { put: [], remove: [], skipped: [] };
  const stored = new Map(i.stored.machines.map((m) => [m.id, m]));
  const fromNodes = i.declared.machines.flatMap((n) =>
    'machine' in n && !i.fileMachines.has(n.machine.id) ? [n.machine] : [],
  );
  const wanted = new Set(fromNodes.map((m) => m.id));
  const busy = new Set(
    i.stored.rollouts
      .filter((r) => !isEnded(r.state))
      .flatMap((r) =>
        Object.entries(r.machines)
          .filter(([, p]) => p.phase === 'InFlight')
          .map(([id]) => id),
      ),
  );
  return {
    put: fromNodes.filter((m) => !sameRecord(stored.get(m.id), m)),
    remove: i.stored.machines
      .filter((m) => m.fromNode === true && !wanted.has(m.id) && !busy.has(m.id))
      .map((m) => m.id),
    skipped: i.declared.machines.flatMap((n) => ('skipped' in n ? [n] : [])),
  };
}
