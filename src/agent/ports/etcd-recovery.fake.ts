// SPDX-License-Identifier: Apache-2.0
/**
 * A scripted {@link EtcdRecovery} for API and CLI tests: a member list, a snapshot's bytes, and
 * every call recorded (a restore keeps the bytes of the file it was given), so tests see what
 * reached etcd.
 */
import { readFile } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { ErrorCode, MoltError } from '../../core/errors.ts';
import type { EtcdMemberView, EtcdRecovery } from './etcd-recovery.ts';

export interface FakeEtcdRecovery extends EtcdRecovery {
  readonly calls: string[];
  /** The member list it answers with. */
  list: EtcdMemberView[];
  snapshotBytes: Uint8Array;
  /** The bytes of the file the last restore was given (read while it existed), and its path. */
  restored?: { bytes: Uint8Array; path: string };
}

export const fakeMember = (
  name: string,
  id: string,
  o: Partial<EtcdMemberView> = {},
): EtcdMemberView => ({
  id,
  name,
  peerUrls: [`http://${name}:2380`],
  clientUrls: [`http://${name}:2379`],
  isLeader: false,
  isLearner: false,
  ...o,
});

/** A three-member cluster (cp-1 leads) as machine `self` sees it. */
export function createFakeEtcdRecovery(self = 'cp-1'): FakeEtcdRecovery {
  const fake: FakeEtcdRecovery = {
    calls: [],
    list: ['cp-1', 'cp-2', 'cp-3'].map((name, i) =>
      fakeMember(name, ['a1', 'b2', 'c3'][i] ?? '', { isLeader: i === 0, self: name === self }),
    ),
    snapshotBytes: new Uint8Array([1, 2, 3]),
    members() {
      fake.calls.push('members');
      return Promise.resolve(fake.list);
    },
    snapshot() {
      fake.calls.push('snapshot');
      const bytes = fake.snapshotBytes;
      return Promise.resolve(Readable.from([bytes]) as AsyncIterable<Uint8Array>);
    },
    forfeitLeadership(to) {
      fake.calls.push(`forfeit ${to ?? '-'}`);
      return Promise.resolve({ leader: to ?? 'b2', moved: true });
    },
    removeMember(id) {
      fake.calls.push(`remove ${id}`);
      if (!fake.list.some((m) => m.id === id))
        return Promise.reject(new MoltError(ErrorCode.EtcdMemberNotFound, `no member ${id}`));
      fake.list = fake.list.filter((m) => m.id !== id);
      return Promise.resolve(fake.list);
    },
    async restore(file) {
      fake.calls.push('restore');
      fake.restored = { bytes: await readFile(file), path: file };
      fake.list = fake.list.filter((m) => m.self === true).map((m) => ({ ...m, isLeader: true }));
      return fake.list;
    },
    rejoin() {
      fake.calls.push('rejoin');
      return Promise.resolve(fake.list);
    },
  };
  return fake;
}
