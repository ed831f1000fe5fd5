// SPDX-License-Identifier: Apache-2.0
/** In-memory EPHEMERAL: mounted or not, its files, and a busy flag for the abort tests. */
import { ErrorCode, MoltError } from '../../core/errors.ts';
import type { Mounts } from './mounts.ts';

export interface FakeMounts extends Mounts {
  mounted: boolean;
  busy: boolean;
  files: Set<string>;
  readonly wipes: string[];
}

export function createFakeMounts(): FakeMounts {
  const fake: FakeMounts = {
    mounted: true,
    busy: false,
    files: new Set(['etcd/member/snap/db']),
    wipes: [],
    release() {
      if (fake.busy) return Promise.reject(new MoltError(ErrorCode.MountBusy, 'EPHEMERAL is busy'));
      fake.mounted = false;
      return Promise.resolve();
    },
    mount() {
      fake.mounted = true;
      return Promise.resolve();
    },
    wipe(operationId: string) {
      if (!fake.wipes.includes(operationId)) {
        fake.files.clear();
        fake.wipes.push(operationId);
      }
      return Promise.resolve();
    },
  };
  return fake;
}
