// SPDX-License-Identifier: Apache-2.0
/**
 * The snapshot `molt cluster recover` is given, checked on the workstation before any machine is
 * touched: it must exist, start like an etcd snapshot (a bbolt file), and — where `etcdutl` is
 * found (MOLT_ETCDUTL, else PATH) — pass `etcdutl snapshot status`, whose revision and key count
 * are shown.
 */
import { execFile } from 'node:child_process';
import { access, constants, open } from 'node:fs/promises';
import { delimiter, join } from 'node:path';
import { ErrorCode, MoltError } from '../../../protocol/index.ts';
import { looksLikeEtcdSnapshot, SnapshotHeaderBytes } from '../../../protocol/etcd-snapshot.ts';
import type { CliEnv } from '../../flags.ts';

/** What the check found: the file's size, and etcdutl's view where it ran. */
export interface SnapshotFacts {
  readonly bytes: number;
  readonly status?: { revision: number; keys: number };
  /** Why etcdutl did not look (not found). */
  readonly headerOnly?: string;
}

async function readHead(file: string): Promise<{ head: Buffer; bytes: number }> {
  let handle;
  try {
    handle = await open(file, 'r');
  } catch (e) {
    throw new MoltError(ErrorCode.BadFlag, `--etcd-snapshot ${file}: ${(e as Error).message}`, {
      hint: 'take one with `molt node etcd snapshot --output FILE` while the cluster is healthy',
    });
  }
  try {
    const head = Buffer.alloc(SnapshotHeaderBytes);
    await handle.read(head, 0, head.length, 0);
    return { head, bytes: (await handle.stat()).size };
  } finally {
    await handle.close();
  }
}

/** The etcdutl to check with, or undefined. */
export async function findEtcdutl(env: CliEnv): Promise<string | undefined> {
  const candidates =
    env['MOLT_ETCDUTL'] !== undefined
      ? [env['MOLT_ETCDUTL']]
      : (env['PATH'] ?? '')
          .split(delimiter)
          .filter((d) => d !== '')
          .map((d) => join(d, 'etcdutl'));
  for (const c of candidates)
    if (
      await access(c, constants.X_OK).then(
        () => true,
        () => false,
      )
    )
      return c;
  return undefined;
}

function etcdutlStatus(binary: string, file: string): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    execFile(
      binary,
      ['snapshot', 'status', file, '-w', 'json'],
      { timeout: 120_000 },
      (e, out, err) => {
        resolve({ code: e === null ? 0 : 1, out: e === null ? out : `${err}${e.message}` });
      },
    );
  });
}

/** MOLT_BAD_FLAG (no such file) or MOLT_ETCD_SNAPSHOT_INVALID, else what the file is. */
export async function checkSnapshotFile(file: string, env: CliEnv): Promise<SnapshotFacts> {
  const { head, bytes } = await readHead(file);
  if (!looksLikeEtcdSnapshot(head))
    throw new MoltError(ErrorCode.EtcdSnapshotInvalid, `${file} is not an etcd snapshot`, {
      hint: 'give a file `molt node etcd snapshot --output FILE` (or `etcdctl snapshot save`) wrote; nothing was changed',
    });
  const etcdutl = await findEtcdutl(env);
  if (etcdutl === undefined) return { bytes, headerOnly: 'etcdutl not found (MOLT_ETCDUTL, PATH)' };
  const r = await etcdutlStatus(etcdutl, file);
  if (r.code !== 0)
    throw new MoltError(
      ErrorCode.EtcdSnapshotInvalid,
      `${file} is not a readable etcd snapshot: ${r.out.trim().split('\n')[0] ?? ''}`,
      { hint: 'it may be truncated or damaged; nothing was changed' },
    );
  const s = JSON.parse(r.out) as { revision?: number; totalKey?: number };
  return { bytes, status: { revision: s.revision ?? 0, keys: s.totalKey ?? 0 } };
}
