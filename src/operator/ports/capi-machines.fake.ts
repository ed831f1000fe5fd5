// SPDX-License-Identifier: Apache-2.0
/**
 * An in-memory {@link CapiMachines}: Machines as conditions and annotations keyed
 * `namespace/name`, every write recorded; `fail` makes each call throw `MOLT_CAPI_WRITE_FAILED`.
 * `add` puts a Machine with a uid, providerID and nodeRef there (for `find`); a deleted Machine
 * is gone (`find` does not list it), one `deleting` is listed as such.
 */
import { ErrorCode, MoltError } from '../../core/errors.ts';
import {
  RemediateMachineAnnotation,
  mappedMoltMachine,
  type CapiMachineFound,
  type CapiMachineKey,
  type CapiMachines,
  type MoltCondition,
  type Remediation,
} from './capi-machines.ts';

export interface FakeMachine {
  condition?: MoltCondition;
  annotations: Record<string, string>;
  deleted: boolean;
  uid?: string;
  controlPlane?: boolean;
  providerID?: string;
  nodeRef?: string;
  deleting?: boolean;
}

export type FakeMachineInit = Partial<Omit<FakeMachine, 'condition' | 'deleted'>>;

export class FakeCapiMachines implements CapiMachines {
  readonly machines = new Map<string, FakeMachine>();
  readonly writes: { machine: string; condition: MoltCondition }[] = [];
  readonly remediations: { machine: string; how: Remediation }[] = [];
  /** Each call throws while true. */
  fail = false;

  machine(key: string): FakeMachine {
    let m = this.machines.get(key);
    if (m === undefined) {
      m = { annotations: {}, deleted: false };
      this.machines.set(key, m);
    }
    return m;
  }

  /** A Machine `namespace/name` as CAPI would create it (uid defaults to `uid-<name>`). */
  add(key: string, init: FakeMachineInit = {}): FakeMachine {
    const m: FakeMachine = {
      uid: `uid-${key.split('/')[1] ?? key}`,
      ...init,
      annotations: { ...init.annotations },
      deleted: false,
    };
    this.machines.set(key, m);
    return m;
  }

  find(moltMachine: string): Promise<readonly CapiMachineFound[]> {
    if (this.fail) return Promise.reject(failure(`mapped to ${moltMachine}`));
    const found: CapiMachineFound[] = [];
    for (const [key, m] of this.machines) {
      if (m.deleted || mappedMoltMachine(m) !== moltMachine) continue;
      const [namespace = '', name = ''] = key.split('/');
      found.push({
        namespace,
        name,
        uid: m.uid ?? '',
        controlPlane: m.controlPlane === true,
        deleting: m.deleting === true,
        ...(m.nodeRef !== undefined && { nodeRef: m.nodeRef }),
      });
    }
    return Promise.resolve(found);
  }

  setCondition(ref: CapiMachineKey, condition: MoltCondition): Promise<void> {
    const key = `${ref.namespace}/${ref.name}`;
    if (this.fail) return Promise.reject(failure(key));
    this.writes.push({ machine: key, condition });
    this.machine(key).condition = condition;
    return Promise.resolve();
  }

  remediate(ref: CapiMachineKey): Promise<Remediation> {
    const key = `${ref.namespace}/${ref.name}`;
    if (this.fail) return Promise.reject(failure(key));
    const m = this.machine(key);
    let how: Remediation;
    if (m.deleted) how = 'gone';
    else if (ref.controlPlane) {
      m.annotations[RemediateMachineAnnotation] = '';
      how = 'annotated';
    } else {
      m.deleted = true;
      how = 'deleted';
    }
    this.remediations.push({ machine: key, how });
    return Promise.resolve(how);
  }
}

const failure = (key: string): MoltError =>
  new MoltError(ErrorCode.CapiWriteFailed, `could not write Machine ${key}: the fake fails`);
