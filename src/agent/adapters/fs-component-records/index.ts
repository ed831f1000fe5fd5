// SPDX-License-Identifier: Apache-2.0
/**
 * {@link ComponentRecords} in `<root>/state/kubernetes/components.json`, replaced atomically (temp
 * file, fsync, rename): a power cut leaves the old record or the new one. STATE survives upgrades
 * and reboots, so the components come back on what was last applied — not on the machine config's
 * initial binaries, which would be a silent downgrade.
 */
import { join } from 'node:path';
import { z } from 'zod';
import type { ComponentRecord, ComponentRecords } from '../../ports/control-plane.ts';
import { readJsonRecord, writeJsonRecord } from '../fs/json-record.ts';

const RecordSchema = z.object({
  spec: z.object({
    name: z.string(),
    binary: z.string(),
    args: z.array(z.string()),
    env: z.record(z.string(), z.string()),
    port: z.number().int(),
    hash: z.string(),
  }),
  version: z.string().optional(),
  bundle: z.string().optional(),
  emulatedVersion: z.string().optional(),
});
const FileSchema = z.object({ components: z.record(z.string(), RecordSchema) });

export function componentRecordsPath(root: string): string {
  return join(root, 'state', 'kubernetes', 'components.json');
}

export function createFsComponentRecords(root: string): ComponentRecords {
  const path = componentRecordsPath(root);
  return {
    async load() {
      const file = await readJsonRecord(path, FileSchema, {
        message: `${path} is not a record molt wrote`,
        hint: 'restore it, or remove it to run the machine config’s initial components (a version change!)',
      });
      return (file?.components ?? {}) as Record<string, ComponentRecord>;
    },
    save: (records) => writeJsonRecord(path, { components: records }),
  };
}
