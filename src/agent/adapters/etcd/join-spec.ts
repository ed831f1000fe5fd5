// SPDX-License-Identifier: Apache-2.0
/**
 * How the etcd member adapter tells the service that starts etcd to join an existing cluster
 * (docs/adr/0004 §5). After `member add`, etcd must start once with `--initial-cluster-state
 * existing` and the member list etcd returned; the `Services` port has no arguments, so the member
 * adapter writes this file beside the data dir (`<dataDir>.join.json`) before starting the service,
 * and the service reads it whenever it starts etcd. etcd ignores both flags once its data dir
 * holds a member, so a stale file is harmless; a file (not memory) survives an agent restart
 * between `member add` and the start.
 */
import { readFile, rm } from 'node:fs/promises';
import { writeFileAtomic } from '../fs/atomic-write.ts';

/** Flags for an etcd member joining a running cluster. */
export interface JoinSpec {
  /** `name=peerUrl,…` of every member, this one included. */
  readonly initialCluster: string;
  readonly state: 'existing';
}

/** Where the join spec for the member with data dir `dataDir` lives. */
export function joinSpecPath(dataDir: string): string {
  return `${dataDir.replace(/\/+$/, '')}.join.json`;
}

export async function writeJoinSpec(dataDir: string, spec: JoinSpec): Promise<void> {
  await writeFileAtomic(joinSpecPath(dataDir), `${JSON.stringify(spec)}\n`);
}

/** The join spec, or undefined when there is none (a member of the initial cluster). */
export async function readJoinSpec(dataDir: string): Promise<JoinSpec | undefined> {
  let text: string;
  try {
    text = await readFile(joinSpecPath(dataDir), 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
  const parsed = JSON.parse(text) as Partial<JoinSpec>;
  if (typeof parsed.initialCluster !== 'string' || parsed.state !== 'existing') return undefined;
  return { initialCluster: parsed.initialCluster, state: 'existing' };
}

export async function removeJoinSpec(dataDir: string): Promise<void> {
  await rm(joinSpecPath(dataDir), { force: true });
}
