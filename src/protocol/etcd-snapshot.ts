// SPDX-License-Identifier: Apache-2.0
/**
 * What an etcd snapshot looks like from its first bytes: a bbolt database, whose first page is a
 * meta page (page flags 0x04 at offset 8) carrying bbolt's magic 0xED0CDAED (little-endian, at
 * offset 16). Enough to refuse a wrong file (a kubeconfig, an empty file, a tarball) before a
 * recovery stops anything; `etcdutl snapshot status` checks the rest where it is installed.
 */

/** Bytes a header check needs. */
export const SnapshotHeaderBytes = 20;

const bboltMagic = [0xed, 0xda, 0x0c, 0xed] as const;
const metaPageFlag = 0x04;

/** Whether `head` (the file's first {@link SnapshotHeaderBytes} bytes or more) starts a bbolt file. */
export function looksLikeEtcdSnapshot(head: Uint8Array): boolean {
  if (head.length < SnapshotHeaderBytes) return false;
  if (((head[8] ?? 0) & metaPageFlag) === 0) return false;
  return bboltMagic.every((b, i) => head[16 + i] === b);
}
