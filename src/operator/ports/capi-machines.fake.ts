// SPDX-License-Identifier: Apache-2.0
/**
 * An in-memory {@link CapiMachines}: Machines as conditions and annotations keyed
 * `namespace/name`, every write recorded; `fail` makes each call throw `MOLT_CAPI_WRITE_FAILED`.
 * `add` puts a Machine with a uid, providerID, Cluster (`c1` unless told), version and nodeRef there
 * and MachineSet (for `find`, `get` and `ofMachineSet`); a deleted Machine is gone (none finds it),
 * one `deleting` is listed as such.
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
  /** Its `spec.clusterName`. @default 'c1' */
  clusterName?: string;
  /** Its `spec.version`. */
  version?: string;
  /** The MachineSet that owns it (its label `cluster.x-k8s.io/set-name`). */
  machineSet?: string;
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

  /** Every read: `get`'s `namespace/name`, `ofMachineSet`'s `MachineSet namespace/name`. */
  readonly reads: string[] = [];

  find(moltMachine: string): Promise<readonly CapiMachineFound[]> {
    if (this.fail) return Promise.reject(failure(`mapped to ${moltMachine}`));
    const found: CapiMachineFound[] = [];
    for (const [key, m] of this.machines)
      if (!m.deleted && mappedMoltMachine(m) === moltMachine) found.push(asFound(key, m));
    return Promise.resolve(found);
  }

  get(namespace: string, name: string): Promise<CapiMachineFound | undefined> {
    const key = `${namespace}/${name}`;
    if (this.fail) return Promise.reject(failure(key));
    this.reads.push(key);
    const m = this.machines.get(key);
    return Promise.resolve(m === undefined || m.deleted ? undefined : asFound(key, m));
  }

  ofMachineSet(namespace: string, machineSet: string): Promise<readonly CapiMachineFound[]> {
    const at = `${namespace}/${machineSet}`;
    if (this.fail) return Promise.reject(failure(`of MachineSet ${at}`));
    this.reads.push(`MachineSet ${at}`);
    const found: CapiMachineFound[] = [];
    for (const [key, m] of this.machines)
      if (!m.deleted && key.startsWith(`${namespace}/`) && m.machineSet === machineSet)
        found.push(asFound(key, m));
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
    // A Machine set up with another uid than the one asked for is another object under the name.
    if (m.deleted || (ref.uid !== undefined && m.uid !== undefined && ref.uid !== m.uid))
      how = 'gone';
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

function asFound(key: string, m: FakeMachine): CapiMachineFound {
  const [namespace = '', name = ''] = key.split('/');
  const moltMachine = mappedMoltMachine(m);
  return {
    namespace,
    name,
    uid: m.uid ?? '',
    clusterName: m.clusterName ?? 'c1',
    controlPlane: m.controlPlane === true,
    deleting: m.deleting === true,
    ...(moltMachine !== undefined && { moltMachine }),
    ...(m.version !== undefined && { version: m.version }),
    ...(m.nodeRef !== undefined && { nodeRef: m.nodeRef }),
  };
}

const failure = (key: string): MoltError =>
  new MoltError(ErrorCode.CapiWriteFailed, `could not write Machine ${key}: the fake fails`);
