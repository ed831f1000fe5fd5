// SPDX-License-Identifier: Apache-2.0
/**
 * {@link ComponentRecords} in `<root>/state/kubernetes/components.json`, replaced atomically (temp
 * file, fsync, rename): a power cut leaves the old record or the new one. STATE survives upgrades
 * and reboots, so the components come back on what was last applied — not on the machine config's
 * initial binaries, which would be a silent downgrade.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { ErrorCode, MoltError } from '../../../core/errors.ts';
import type { ComponentRecord, ComponentRecords } from '../../ports/control-plane.ts';
import { writeFileAtomic } from '../fs/atomic-write.ts';

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
      let text: string;
      try {
        text = await readFile(path, 'utf8');
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'ENOENT') return {};
        throw e;
      }
      let parsed;
      try {
        parsed = FileSchema.safeParse(JSON.parse(text));
      } catch (e) {
        throw corrupt(path, e);
      }
      if (!parsed.success) throw corrupt(path, parsed.error);
      return parsed.data.components as Record<string, ComponentRecord>;
    },
    async save(records) {
      await writeFileAtomic(path, `${JSON.stringify({ components: records }, null, 2)}\n`);
    },
  };
}

function corrupt(path: string, cause: unknown): MoltError {
  return new MoltError(ErrorCode.MachineInvalid, `${path} is not a record molt wrote`, {
    cause,
    hint: 'restore it, or remove it to run the machine config’s initial components (a version change!)',
  });
}
