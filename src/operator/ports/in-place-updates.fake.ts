// SPDX-License-Identifier: Apache-2.0
/**
 * An in-memory {@link InPlaceUpdates} for the CAPI extension server's tests: manages the Machines
 * (and MachineSets) named `namespace/name` in `managed` — a Machine as the molt machine of its
 * name, in pool `workers`, control plane when listed in `controlPlane`, at `version`; each update reports
 * `in-progress` for `steps` calls, then `done` (or `failed` for a version in `failing`). It records
 * every call.
 */
import type {
  CapiMachineRef,
  InPlaceUpdateState,
  InPlaceUpdates,
  ManagedMachine,
  Resolution,
} from './in-place-updates.ts';

export interface FakeInPlaceUpdatesOptions {
  readonly managed: readonly string[];
  /** The managed Machines that are control-plane Machines on the management cluster. */
  readonly controlPlane?: readonly string[];
  /** Calls answered `in-progress` before `done`. @default 1 */
  readonly steps?: number;
  /** Versions whose update fails on the machine (it rolls back). */
  readonly failing?: readonly string[];
  /** Versions molt cannot update to before touching the machine (no release carries them). */
  readonly uncarried?: readonly string[];
  /**
   * The `spec.version` each managed Machine has on the management cluster (CAPI writes the desired
   * one before it calls). @default 'v1.35.0'
   */
  readonly version?: string;
}

export class FakeInPlaceUpdates implements InPlaceUpdates {
  readonly calls: { machine: string; version: string }[] = [];
  readonly #o: FakeInPlaceUpdatesOptions;
  readonly #seen = new Map<string, number>();

  constructor(o: FakeInPlaceUpdatesOptions) {
    this.#o = o;
  }

  resolve(ref: CapiMachineRef): Promise<Resolution> {
    const key = `${ref.namespace}/${ref.name}`;
    if (!this.#o.managed.includes(key))
      return Promise.resolve({ refused: `${ref.kind} ${key}: not mapped` });
    const at = { namespace: ref.namespace, name: ref.name };
    return Promise.resolve({
      managed:
        ref.kind === 'MachineSet'
          ? {
              kind: 'MachineSet',
              ...at,
              clusterName: ref.clusterName,
              pools: ['workers'],
              machines: [],
            }
          : {
              kind: 'Machine',
              ...at,
              machine: ref.name,
              pool: 'workers',
              uid: `uid-${ref.name}`,
              version: this.#o.version ?? 'v1.35.0',
              controlPlane: this.#o.controlPlane?.includes(key) === true,
            },
    });
  }

  update(machine: ManagedMachine, version: string): Promise<InPlaceUpdateState> {
    const key = `${machine.namespace}/${machine.name}`;
    this.calls.push({ machine: key, version });
    if (this.#o.failing?.includes(version))
      return Promise.resolve({
        state: 'failed',
        message: `${key}: ${version} failed its health checks; rolled back`,
        machineFailed: true,
      });
    if (this.#o.uncarried?.includes(version))
      return Promise.resolve({
        state: 'failed',
        message: `no release carries Kubernetes ${version}`,
      });
    const seen = (this.#seen.get(`${key}@${version}`) ?? 0) + 1;
    this.#seen.set(`${key}@${version}`, seen);
    return Promise.resolve(
      seen > (this.#o.steps ?? 1)
        ? { state: 'done', message: `${key} runs Kubernetes ${version}` }
        : { state: 'in-progress', message: `${key}: writing slot B` },
    );
  }
}
