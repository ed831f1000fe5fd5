// SPDX-License-Identifier: Apache-2.0
/**
 * What molt writes back to a CAPI Machine after each UpdateMachine (docs/adr/0014 decision 5): its
 * condition `MoltInPlaceUpdate` — Unknown/`InProgress`, True/`Updated`, False/`RolledBack` (the
 * machine failed the release and rolled back) or False/`NotUpdated` (molt could not start it: no
 * release carries the version, …), each with molt's message, written only when it changed — and,
 * once the machine itself failed and `capi.onFailure` is `remediate`, one remediation (CAPI would
 * otherwise retry for ever; a failure of molt's configuration is not fixed by a new Machine). The hook
 * answer never waits longer than `budgetMs` for these writes (they go on behind it, each bounded
 * by the adapter), and a failed write is logged, never answered: CAPI's next call tries again.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { makeRoom } from '../../core/bounded.ts';
import type { CapiMachineKey, CapiMachines, MoltCondition } from '../ports/capi-machines.ts';
import type { InPlaceUpdateState, ManagedMachine } from '../ports/in-place-updates.ts';
import { errorMessage } from '../../core/errors.ts';

/** What the Machine's condition says for each state. */
const conditionOf = {
  'in-progress': { status: 'Unknown', reason: 'InProgress' },
  done: { status: 'True', reason: 'Updated' },
  failed: { status: 'False', reason: 'RolledBack' },
  refused: { status: 'False', reason: 'NotUpdated' },
} as const;
const conditionFor = (s: InPlaceUpdateState) =>
  conditionOf[s.state === 'failed' && s.machineFailed !== true ? 'refused' : s.state];

/**
 * Machines remembered (last condition, remediated): the oldest are forgotten past this, so an
 * operator living through many Machine churns keeps bounded memory. A forgotten Machine costs one
 * extra condition write; a remediated one that comes back is already deleting (found so).
 */
export const MachinesRemembered = 10_000;

/** How long the hook answer waits for the writes at most. */
export const MachineStatusBudgetMs = 3_000;

export interface MachineStatusDeps {
  readonly machines: CapiMachines;
  /** `remediate` (the default): a failed update hands the Machine back to CAPI for replacement. */
  readonly onFailure: 'remediate' | 'report';
  readonly now: () => number;
  readonly log: (line: string) => void;
  /** @default MachineStatusBudgetMs */
  readonly budgetMs?: number;
  /** @default MachinesRemembered */
  readonly remember?: number;
}

/** Follows each UpdateMachine answer onto its Machine. */
export interface MachineStatus {
  /** `machine` is molt's own resolution (its read of the management cluster), never a request's. */
  report(machine: ManagedMachine, state: InPlaceUpdateState): Promise<void>;
}

export function machineStatus(d: MachineStatusDeps): MachineStatus {
  /** What was last written on each Machine (`namespace/name`). */
  const written = new Map<string, MoltCondition>();
  /** Machines remediated (or being remediated): once each. */
  const remediated = new Set<string>();

  const setCondition = async (key: string, ref: CapiMachineKey, s: InPlaceUpdateState) => {
    const c = conditionFor(s);
    const last = written.get(key);
    if (last?.status === c.status && last.reason === c.reason && last.message === s.message) return;
    const since =
      last?.status === c.status ? last.lastTransitionTime : new Date(d.now()).toISOString();
    const condition: MoltCondition = { ...c, message: s.message, lastTransitionTime: since };
    await d.machines.setCondition(ref, condition);
    written.delete(key);
    makeRoom(written, d.remember ?? MachinesRemembered);
    written.set(key, condition);
  };

  const remediate = async (key: string, ref: CapiMachineKey) => {
    if (remediated.has(key)) return;
    makeRoom(remediated, d.remember ?? MachinesRemembered);
    remediated.add(key);
    try {
      const how = await d.machines.remediate(ref);
      d.log(`Cluster API: Machine ${key} failed its in-place update; ${remediationLine[how]}`);
    } catch (e) {
      remediated.delete(key);
      throw e;
    }
  };

  const follow = async (ref: ManagedMachine, s: InPlaceUpdateState): Promise<void> => {
    const key = `${ref.namespace}/${ref.name}`;
    const machine = {
      namespace: ref.namespace,
      name: ref.name,
      controlPlane: ref.controlPlane,
      uid: ref.uid,
    };
    try {
      await setCondition(key, machine, s);
      if (s.state === 'failed' && s.machineFailed === true && d.onFailure === 'remediate')
        await remediate(key, machine);
    } catch (e) {
      d.log(`Cluster API: Machine ${key}: ${errorMessage(e)} (tried again at CAPI's next call)`);
    }
  };

  return {
    async report(ref, s) {
      const budget = new AbortController();
      await Promise.race([
        follow(ref, s).finally(() => {
          budget.abort();
        }),
        sleep(d.budgetMs ?? MachineStatusBudgetMs, undefined, { signal: budget.signal }).catch(
          () => undefined,
        ),
      ]);
    },
  };
}

const remediationLine = {
  annotated: 'annotated it cluster.x-k8s.io/remediate-machine so its control plane replaces it',
  deleted: 'deleted it so its MachineSet replaces it',
  gone: 'it is already gone',
} as const;
