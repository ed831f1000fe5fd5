// SPDX-License-Identifier: Apache-2.0
/**
 * {@link FleetLockStore} on the Kubernetes API (`store: kubernetes`, docs/adr/0016): one
 * `fleetlock` record per group holding the semaphore as the etcd adapter stores it. The revision
 * handed out is the object's resourceVersion, `'0'` for a group never written: a write at `'0'` is
 * a create (of two racing creators one gets 409 AlreadyExists), any other a replace at that
 * resourceVersion (409 Conflict when somebody wrote in between). Either loss is a `false`.
 */
import { ErrorCode, MoltError } from '../../../core/errors.ts';
import { GROUP_PATTERN, type Semaphore } from '../../../core/fleetlock/semaphore.ts';
import type { FleetLockRead, FleetLockStore } from '../../ports/fleetlock-store.ts';
import { decodeSemaphore, encodeSemaphore } from '../etcd-fleetlock/store.ts';
import { Conflict, nameOf, Records, type RecordsOptions } from './records.ts';

/** The group, refused when outside the protocol's pattern (as the etcd adapter does). */
function checked(group: string): string {
  if (!GROUP_PATTERN.test(group))
    throw new MoltError(ErrorCode.BadInput, `'${group}' is not a FleetLock group name`);
  return group;
}

export class KubeFleetLockStore implements FleetLockStore {
  private readonly records: Records;

  constructor(o: RecordsOptions) {
    this.records = new Records(o);
  }

  async read(group: string): Promise<FleetLockRead> {
    const read = await this.records.get('fleetlock', checked(group));
    if (read === undefined) return { sem: undefined, revision: '0' };
    const where = `${this.records.namespace}/${nameOf('fleetlock', group)}`;
    return { sem: decodeSemaphore(where, JSON.stringify(read.data)), revision: read.rv };
  }

  async write(group: string, sem: Semaphore, expectedRevision: string): Promise<boolean> {
    const data: unknown = JSON.parse(encodeSemaphore(sem));
    const outcome =
      expectedRevision === '0'
        ? await this.records.create('fleetlock', checked(group), data)
        : await this.records.replace('fleetlock', checked(group), data, expectedRevision);
    return outcome !== Conflict;
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}
