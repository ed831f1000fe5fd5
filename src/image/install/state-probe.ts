// SPDX-License-Identifier: Apache-2.0
/**
 * What the STATE partition of an existing molt layout holds, read without mounting it (a mount
 * would replay a journal, and needs root for a disk file): `blkid -p` at the partition's offset
 * for a signature, then for an ext filesystem `debugfs` (e2fsprogs' `?offset=`) lists its root and
 * reads the node its `config.yaml` names. Reads only; core/disk judges whether that is a machine.
 */
import { parse } from 'yaml';
import type { StateContent } from '../../core/disk/table.ts';
import { run } from './tools.ts';

/** blkid's answers that are not failures: 2 = nothing found, 8 = several signatures. */
const Nothing = 2;
const Ambivalent = 8;

/**
 * `debugfs -R 'ls -p /'`: `/inode/mode/uid/gid/name/size/` a line. debugfs exits 0 when it opened
 * the filesystem but could not read the directory, so a listing without `.` is no listing:
 * undefined, and the judge counts what it cannot see as a machine's.
 */
function rootEntries(listing: string): string[] | undefined {
  const names = listing
    .split('\n')
    .map((line) => line.split('/')[5])
    .filter((name): name is string => name !== undefined && name !== '');
  if (!names.includes('.')) return undefined;
  return names.filter((name) => !['.', '..', 'lost+found'].includes(name)).sort();
}

/** The `node:` of a config.yaml; undefined when it names none or is not YAML. */
function nodeOf(configText: string): string | undefined {
  try {
    const node = (parse(configText) as { node?: unknown } | null)?.node;
    return typeof node === 'string' ? node : undefined;
  } catch {
    return undefined;
  }
}

/** The signature blkid finds in `size` bytes at `offset` of `disk`; undefined: none. */
async function signatureAt(
  disk: string,
  offset: number,
  size: number,
): Promise<string | undefined> {
  const probe = await run(
    'blkid',
    ['-p', '-o', 'export', '-O', String(offset), '-S', String(size), disk],
    { okCodes: [Nothing, Ambivalent] },
  );
  if (probe.code === Nothing) return undefined;
  if (probe.code === Ambivalent) return 'several conflicting signatures';
  return /^(?:TYPE|PTTYPE)=(.+)$/m.exec(probe.stdout)?.[1] ?? 'a signature';
}

/** What STATE at `offset` (`size` bytes) of `disk` holds. */
export async function readState(disk: string, offset: number, size: number): Promise<StateContent> {
  const filesystem = await signatureAt(disk, offset, size);
  if (filesystem === undefined) return {};
  if (!/^ext[234]$/.test(filesystem)) return { filesystem };
  const image = `${disk}?offset=${String(offset)}`;
  const listing = await run('debugfs', ['-R', 'ls -p /', image]).catch(() => undefined);
  const entries = listing === undefined ? undefined : rootEntries(listing.stdout);
  if (entries === undefined) return { filesystem };
  if (!entries.includes('config.yaml')) return { filesystem, entries };
  const config = await run('debugfs', ['-R', 'cat /config.yaml', image]).catch(() => undefined);
  const node = config === undefined ? undefined : nodeOf(config.stdout);
  return { filesystem, entries, ...(node !== undefined && { node }) };
}
