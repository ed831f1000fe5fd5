// SPDX-License-Identifier: Apache-2.0
/**
 * `etcdutl` (etcd ≥ 3.5's offline tool) as a child process: argument arrays, a timeout, the exit
 * status as a value. `snapshot status` checks a file before a restore stops anything; `snapshot
 * restore` writes a new data directory from it.
 */
import { execFile } from 'node:child_process';
import { access, constants, open } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { ErrorCode, MoltError } from '../../../core/errors.ts';
import { looksLikeEtcdSnapshot, SnapshotHeaderBytes } from '../../../protocol/etcd-snapshot.ts';

export interface EtcdutlResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs etcdutl with `args`; never rejects for a non-zero exit. Tests inject a stand-in. */
export type EtcdutlRunner = (args: readonly string[]) => Promise<EtcdutlResult>;

/** The etcdutl a machine uses: the config's, else the one beside its etcd binary. */
export function etcdutlPath(o: {
  etcdutl?: string | undefined;
  binary?: string | undefined;
}): string {
  return o.etcdutl ?? join(dirname(o.binary ?? '/usr/bin/etcd'), 'etcdutl');
}

export function createEtcdutlRunner(binary: string, timeoutMs = 10 * 60_000): EtcdutlRunner {
  return async (args) => {
    await access(binary, constants.X_OK).catch(() => {
      throw new MoltError(ErrorCode.ToolMissing, `etcdutl is not installed at ${binary}`, {
        hint: 'install etcd 3.5’s etcdutl beside the etcd binary, or name it in the machine config (etcd.etcdutl)',
      });
    });
    return new Promise((resolve) => {
      execFile(
        binary,
        [...args],
        { timeout: timeoutMs, killSignal: 'SIGKILL', maxBuffer: 16 * 1024 * 1024 },
        (error, stdout, stderr) => {
          const e = error as (NodeJS.ErrnoException & { code?: unknown }) | null;
          const code = e === null ? 0 : typeof e.code === 'number' ? e.code : -1;
          resolve({
            code,
            stdout,
            stderr: e !== null && code === -1 ? `${stderr}${e.message}` : stderr,
          });
        },
      );
    });
  };
}

/** The first line etcdutl wrote, for messages. */
export function firstLine(r: EtcdutlResult): string {
  return (
    `${r.stderr}\n${r.stdout}`
      .split('\n')
      .map((l) => l.trim())
      .find((l) => l !== '') ?? `exit ${String(r.code)}`
  );
}

/** MOLT_ETCD_SNAPSHOT_INVALID unless `file` starts like a bbolt file and etcdutl reads it. */
export async function checkSnapshot(file: string, etcdutl: EtcdutlRunner): Promise<void> {
  const head = Buffer.alloc(SnapshotHeaderBytes);
  const handle = await open(file, 'r');
  try {
    await handle.read(head, 0, head.length, 0);
  } finally {
    await handle.close();
  }
  if (!looksLikeEtcdSnapshot(head))
    throw new MoltError(ErrorCode.EtcdSnapshotInvalid, 'the upload is not an etcd snapshot', {
      hint: 'give a file `molt node etcd snapshot --output FILE` (or `etcdctl snapshot save`) wrote',
    });
  const r = await etcdutl(['snapshot', 'status', file, '-w', 'json']);
  if (r.code !== 0)
    throw new MoltError(
      ErrorCode.EtcdSnapshotInvalid,
      `etcdutl cannot read the snapshot: ${firstLine(r)}`,
      { hint: 'the file may be truncated or damaged; take or copy it again' },
    );
}
