// SPDX-License-Identifier: Apache-2.0
/** The shapes `declared.ts` and its parts (`declared-holds.ts`, `declared-inventory.ts`) share. */
import type { Pool } from '../../core/rollout/types.ts';
import type { DeclaredState, DeclaredVerdict, InvalidObject } from '../ports/declared.ts';
import type { Hold, MachineRecord, StoredState } from '../ports/store.ts';

/** A hold with no `until` lasts until its object is deleted: the end of year 9999. */
export const Forever = Date.UTC(9999, 11, 31, 23, 59, 59);

export type DeclaredAction = 'pause' | 'resume' | 'approve' | 'cancel' | 'rollback';

export interface ActionStep {
  readonly rollout: string;
  readonly action: DeclaredAction;
  readonly by: string;
  readonly reason: string;
}

export interface HoldChange {
  readonly machine: string;
  readonly hold: Hold | undefined;
}

/** Machines from Nodes to write into the store, to remove from it, and Nodes that are none. */
export interface InventoryChanges {
  readonly put: readonly MachineRecord[];
  readonly remove: readonly string[];
  readonly skipped: readonly { readonly node: string; readonly skipped: string }[];
}

export interface DeclaredPlan {
  readonly inventory: InventoryChanges;
  readonly pools: readonly Pool[];
  /** Accepted pools by name, to remember as the last accepted spec. */
  readonly accepted: ReadonlyMap<string, Pool>;
  readonly verdicts: readonly DeclaredVerdict[];
  readonly holds: readonly HoldChange[];
  readonly actions: readonly ActionStep[];
  /** Pools being deleted that nothing is in flight in any more. */
  readonly release: readonly string[];
}

export interface DeclaredInput {
  readonly declared: DeclaredState;
  readonly filePools: readonly Pool[];
  /** The ids of the fleet file's machines (the file wins over a Node of the same name). */
  readonly fileMachines: ReadonlySet<string>;
  readonly stored: StoredState;
  /** Pools accepted on an earlier pass (last good spec). */
  readonly lastAccepted: ReadonlyMap<string, Pool>;
  /** The `Rollout` object's name of a rollout id. */
  readonly objectName: (id: string) => string;
  readonly now: number;
}

export const isInvalid = (o: object): o is InvalidObject => 'invalid' in o;
