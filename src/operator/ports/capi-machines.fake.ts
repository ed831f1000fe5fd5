// SPDX-License-Identifier: Apache-2.0
/**
 * An in-memory {@link CapiMachines}: Machines as conditions and annotations keyed
 * `namespace/name`, every write recorded; `fail` makes each call throw `MOLT_CAPI_WRITE_FAILED`.
 */
import { ErrorCode, MoltError } from '../../core/errors.ts';
import {
  RemediateMachineAnnotation,
  type CapiMachineKey,
  type CapiMachines,
  type MoltCondition,
  type Remediation,
} from './capi-machines.ts';

export interface FakeMachine {
  condition?: MoltCondition;
  annotations: Record<string, string>;
  deleted: boolean;
}

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
