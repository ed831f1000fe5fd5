// SPDX-License-Identifier: Apache-2.0
/**
 * The two ways a control-plane machine's etcd comes back (docs/adr/0012 §6):
 *
 * - **restore**: check the snapshot, restore it with `etcdutl` into a directory beside the data
 *   dir (while everything still runs), stop the components and etcd, move the data dir aside to
 *   `<data>.pre-restore-<time>`, put the restored one in its place, start etcd and the components.
 *   The restored member is a new one-member cluster (its own name and peer URL, a new cluster
 *   token): the other machines come back with rejoin. The revision is bumped and marked compacted,
 *   as Kubernetes asks of a restore, so watchers that saw newer revisions list again.
 * - **rejoin**: check that a live cluster answers with another voter, stop the components and
 *   etcd, move the data dir aside to `<data>.pre-rejoin-<time>`, join as a new member (the member
 *   adapter's learner-then-promote), start the components.
 *
 * Nothing is deleted: an old data dir is the last copy of a cluster a person may still need.
 */
import { access, lchown, readdir, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ErrorCode, MoltError } from '../../../core/errors.ts';
import type { EtcdMember } from '../../ports/etcd-member.ts';
import type { Services } from '../../ports/services.ts';
import { checkSnapshot, firstLine, type EtcdutlRunner } from './etcdutl.ts';
import { removeJoinSpec } from './join-spec.ts';
import { lookup, type MemberCtx, type MemberService } from './member-ctx.ts';
import { isVoter } from './member-ids.ts';
import { viewFrom } from './admin.ts';
import { toMoltError } from './errors.ts';

/** What restore and rejoin move and start. */
export interface RestoreDeps {
  readonly ctx: MemberCtx;
  /** Every service of the machine, components and etcd: stopped first, started last. */
  readonly services: Services;
  /** This machine's etcd service (enabled again: a member that left disabled it). */
  readonly etcd: MemberService;
  readonly member: EtcdMember;
  readonly etcdutl: EtcdutlRunner;
  readonly now: () => Date;
}

/** `20261127T014051Z`: sorts by time, safe in a file name. */
const stamp = (d: Date): string => d.toISOString().replace(/[-:]/g, '').replace(/\.\d+/, '');

const exists = (path: string): Promise<boolean> =>
  access(path).then(
    () => true,
    () => false,
  );

/** Move `dataDir` aside as `<dataDir>.<tag>-<time>`; returns where, or undefined when it had none. */
async function moveAside(dataDir: string, tag: string, at: string): Promise<string | undefined> {
  if (!(await exists(dataDir))) return undefined;
  const aside = `${dataDir}.${tag}-${at}`;
  await rename(dataDir, aside);
  return aside;
}

export async function restore(d: RestoreDeps, file: string): Promise<void> {
  const { ctx } = d;
  await checkSnapshot(file, d.etcdutl);
  const at = stamp(d.now());
  const restored = `${ctx.dataDir}.restoring-${at}`;
  const r = await d.etcdutl([
    ...['snapshot', 'restore', file, '--data-dir', restored],
    ...['--name', ctx.name, '--initial-cluster', `${ctx.name}=${ctx.peerUrl}`],
    ...['--initial-advertise-peer-urls', ctx.peerUrl],
    ...['--initial-cluster-token', `molt-restore-${at}`],
    ...['--bump-revision', '1000000000', '--mark-compacted'],
  ]);
  if (r.code !== 0) {
    await rm(restored, { recursive: true, force: true }); // our own partial output
    throw new MoltError(
      ErrorCode.EtcdSnapshotInvalid,
      `etcdutl could not restore the snapshot: ${firstLine(r)}`,
      {
        hint: 'nothing was stopped or changed on this machine',
      },
    );
  }
  const owner = await stat(ctx.dataDir).catch(() => undefined);
  await d.services.stopAll();
  const aside = await moveAside(ctx.dataDir, 'pre-restore', at);
  await rename(restored, ctx.dataDir);
  // etcdutl ran as the agent (root); etcd runs as its own user (Debian's `etcd`), which could not
  // open a root-owned member directory: the restored tree gets the old data dir's owner.
  if (owner !== undefined) await chownTree(ctx.dataDir, owner.uid, owner.gid);
  await removeJoinSpec(ctx.dataDir);
  await d.etcd.enable?.();
  await startAll(d.services, aside);
  await waitAlone(ctx);
}

/** `chown -R uid:gid path`, links themselves and not what they point to. */
async function chownTree(path: string, uid: number, gid: number): Promise<void> {
  await lchown(path, uid, gid);
  for (const entry of await readdir(path, { withFileTypes: true })) {
    const child = join(path, entry.name);
    if (entry.isDirectory()) await chownTree(child, uid, gid);
    else await lchown(child, uid, gid);
  }
}

async function startAll(services: Services, aside: string | undefined): Promise<void> {
  try {
    await services.startAll();
  } catch (e) {
    const error = e instanceof MoltError ? e : toMoltError(e, 'starting the services');
    throw new MoltError(error.code, error.message, {
      cause: e,
      hint: `the previous data dir is kept at ${aside ?? '(there was none)'}; see molt node logs --service etcd`,
    });
  }
}

/** Until the restored member leads itself and serves reads as the only member. */
async function waitAlone(ctx: MemberCtx): Promise<void> {
  const until = performance.now() + (ctx.rejoinTimeoutMs ?? 60_000);
  for (;;) {
    const why = await viewFrom(ctx.clientUrl, ctx.timeoutMs).then(
      (v) =>
        v.leader === v.self && v.members.length === 1
          ? undefined
          : `${String(v.members.length)} members, leader ${v.leader}`,
      (e: unknown) => toMoltError(e, 'status').message,
    );
    if (why === undefined) return;
    if (performance.now() >= until)
      throw new MoltError(
        ErrorCode.EtcdUnhealthy,
        `the restored member did not lead in time: ${why}`,
        {
          hint: 'see molt node logs --service etcd',
          retryable: true,
        },
      );
    await sleep(250);
  }
}

export async function rejoin(d: RestoreDeps): Promise<void> {
  const { ctx } = d;
  // Refused before anything stops: a live cluster must answer, and not through this member alone.
  const live = await lookup(ctx).catch((e: unknown) => {
    throw new MoltError(
      ErrorCode.EtcdUnhealthy,
      `no live etcd cluster answers at ${ctx.endpoints.filter((e2) => e2 !== ctx.clientUrl).join(', ')}: ${toMoltError(e, 'lookup').message}`,
      {
        hint: 'restore one machine first (`molt cluster recover`), then rejoin the others',
        retryable: true,
      },
    );
  });
  const others = live.members.filter((m) => isVoter(m) && m.ID !== live.me?.ID);
  if (others.length === 0)
    throw new MoltError(
      ErrorCode.QuorumAtRisk,
      `${ctx.name} is the cluster's only voting member; it cannot rejoin itself`,
      {
        hint: 'rejoin the other machines to it instead',
      },
    );
  await d.services.stopAll();
  await moveAside(ctx.dataDir, 'pre-rejoin', stamp(d.now()));
  await d.member.rejoin({ asNewMember: true });
  await d.services.startAll();
}
