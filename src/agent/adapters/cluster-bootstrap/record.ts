// SPDX-License-Identifier: Apache-2.0
/** {@link ClusterBootstrapRecord} as a file on STATE: `state/kubernetes/bootstrapped`, JSON. */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ClusterBootstrapRecord } from '../../machine/cluster-bootstrap.ts';
import { writeFileAtomic } from '../fs/atomic-write.ts';

export const bootstrapRecordFile = (root: string): string =>
  join(root, 'state', 'kubernetes', 'bootstrapped');

export function createFsBootstrapRecord(root: string): ClusterBootstrapRecord {
  const file = bootstrapRecordFile(root);
  return {
    done: () =>
      readFile(file, 'utf8').then(
        () => true,
        () => false,
      ),
    mark: (outcome, at) =>
      writeFileAtomic(file, `${JSON.stringify({ at: at.toISOString(), ...outcome })}\n`),
  };
}
