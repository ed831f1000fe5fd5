// SPDX-License-Identifier: Apache-2.0
/**
 * etcd's member list, snapshot, leadership and membership for recovery (docs/adr/0012 §6). Each
 * asks one member at a time through its own client URL — this machine's first — because with
 * quorum lost a client on every endpoint answers from whichever member it picks, and a person
 * reading the list must know whose view it is (and every member still answers for itself).
 */
import type { Readable } from 'node:stream';
import type { Etcd3, IMember, ISnapshotResponse } from 'etcd3';
import { ErrorCode, MoltError } from '../../../core/errors.ts';
import type { EtcdMemberView, ForfeitAnswer } from '../../ports/etcd-recovery.ts';
import { deadline, openClient, withClient } from '../../../platform/etcd/client.ts';
import { etcdCall, toMoltError } from './errors.ts';
import type { MemberCtx } from './member-ctx.ts';
import { decimalId, hexId, isVoter, memberView } from './member-ids.ts';
import { probeMember } from './member-probe.ts';

/** This member's client URL first, then the others'. */
const ownFirst = (ctx: MemberCtx): string[] => [
  ctx.clientUrl,
  ...ctx.endpoints.filter((e) => e !== ctx.clientUrl),
];

/** The member list and leader as one member sees them (no quorum needed), and that member's id. */
export async function viewFrom(
  endpoint: string,
  timeoutMs: number,
): Promise<{ members: IMember[]; leader: string; self: string }> {
  return withClient([endpoint], async (c) => {
    const status = await etcdCall(
      'reading the member status',
      c.maintenance.status(deadline(timeoutMs)),
    );
    const list = await etcdCall('listing members', c.cluster.memberList({}, deadline(timeoutMs)));
    return { members: list.members, leader: status.leader, self: status.header.member_id };
  });
}

/** The first member (this machine's first) that answers; MOLT_ETCD_UNHEALTHY when none does. */
export async function anyView(ctx: MemberCtx): Promise<{ members: IMember[]; leader: string }> {
  const failures: string[] = [];
  for (const endpoint of ownFirst(ctx)) {
    try {
      return await viewFrom(endpoint, ctx.timeoutMs);
    } catch (e) {
      failures.push(`${endpoint}: ${toMoltError(e, 'member list').message}`);
    }
  }
  throw new MoltError(ErrorCode.EtcdUnhealthy, `no etcd member answered: ${failures.join('; ')}`, {
    hint: 'are the etcd services running? `molt node service list` on the control-plane machines',
    retryable: true,
  });
}

export async function members(ctx: MemberCtx): Promise<EtcdMemberView[]> {
  const { members: list, leader } = await anyView(ctx);
  return list.map((m) => memberView(m, leader, ctx));
}

/** The snapshot's blobs from this member, within `timeoutMs`; the first is awaited before returning. */
export async function snapshot(
  ctx: MemberCtx,
  signal: AbortSignal,
  timeoutMs: number,
): Promise<AsyncIterable<Uint8Array>> {
  const client = openClient([ctx.clientUrl]);
  let stream: (Readable & { cancel(): void }) | undefined;
  const cancel = (): void => stream?.cancel();
  signal.addEventListener('abort', cancel, { once: true });
  const done = (): void => {
    signal.removeEventListener('abort', cancel);
    client.close();
  };
  try {
    stream = (await client.maintenance.snapshot(deadline(timeoutMs))) as unknown as Readable & {
      cancel(): void;
    };
    const it = (stream as AsyncIterable<ISnapshotResponse>)[Symbol.asyncIterator]();
    const first = await it.next();
    return blobs(first, it, ctx, done);
  } catch (e) {
    done();
    throw snapshotFailed(ctx, e);
  }
}

async function* blobs(
  first: IteratorResult<ISnapshotResponse>,
  it: AsyncIterator<ISnapshotResponse>,
  ctx: MemberCtx,
  done: () => void,
): AsyncGenerator<Uint8Array> {
  try {
    for (let r = first; r.done !== true; r = await it.next()) yield r.value.blob;
  } catch (e) {
    throw snapshotFailed(ctx, e);
  } finally {
    await it.return?.();
    done();
  }
}

const snapshotFailed = (ctx: MemberCtx, e: unknown): MoltError => {
  const error = toMoltError(e, `the snapshot from ${ctx.name}`);
  return new MoltError(error.code, error.message, {
    cause: e,
    retryable: error.retryable,
    hint: 'a snapshot comes from this machine’s own member; take it on a machine whose etcd runs',
  });
};

/** Hand leadership over when this member leads; see {@link EtcdRecovery.forfeitLeadership}. */
export async function forfeit(ctx: MemberCtx, to?: string): Promise<ForfeitAnswer> {
  const target = to === undefined ? undefined : decimalId(to);
  const own = await viewFrom(ctx.clientUrl, ctx.timeoutMs);
  if (own.leader !== own.self) return { leader: hexId(own.leader), moved: false };
  const next = target ?? (await mostCaughtUp(ctx, own.members, own.self));
  const chosen = own.members.find((m) => m.ID === next);
  if (chosen === undefined)
    throw new MoltError(ErrorCode.EtcdMemberNotFound, `the cluster has no member ${to ?? next}`, {
      hint: 'list them with `molt node etcd members`',
    });
  if (!isVoter(chosen) || chosen.ID === own.self)
    throw new MoltError(ErrorCode.BadInput, `member ${hexId(chosen.ID)} cannot take the lead`, {
      hint: 'name another started voting member (not a learner, not this one)',
    });
  await withClient([ctx.clientUrl], (c) =>
    etcdCall(
      'moving the leadership',
      c.maintenance.moveLeader({ targetID: next }, deadline(ctx.timeoutMs)),
    ),
  );
  const after = await viewFrom(ctx.clientUrl, ctx.timeoutMs);
  return { leader: hexId(after.leader), moved: after.leader !== own.self };
}

/** The other started voter with the highest raft index (the one that loses least taking over). */
async function mostCaughtUp(ctx: MemberCtx, list: IMember[], self: string): Promise<string> {
  const others = list.filter((m) => isVoter(m) && m.ID !== self);
  const probed = await Promise.all(others.map((m) => probeMember(m, ctx.timeoutMs)));
  const best = probed
    .filter((p) => p.raftIndex !== undefined)
    .sort((a, b) => (b.raftIndex ?? 0) - (a.raftIndex ?? 0))[0];
  if (best === undefined)
    throw new MoltError(
      ErrorCode.EtcdUnhealthy,
      'no other voting member answers to take the lead',
      {
        hint: 'see `molt node etcd members`; a lone leader keeps leading',
      },
    );
  return best.id;
}

/** Remove a member by hex id; never the last voter. */
export async function removeMember(
  ctx: MemberCtx,
  id: string,
  disableSelf: () => Promise<void>,
): Promise<EtcdMemberView[]> {
  const target = decimalId(id);
  const { members: list } = await anyView(ctx);
  const m = list.find((x) => x.ID === target);
  if (m === undefined)
    throw new MoltError(ErrorCode.EtcdMemberNotFound, `the cluster has no member ${id}`, {
      hint: 'list them with `molt node etcd members`',
    });
  if (isVoter(m) && list.filter(isVoter).length === 1)
    throw new MoltError(
      ErrorCode.QuorumAtRisk,
      `member ${id} (${m.name}) is the cluster's last voting member; removing it ends the cluster`,
      { hint: 'restore from a snapshot instead: `molt cluster recover --etcd-snapshot FILE`' },
    );
  // This machine's own member: from now on only a rejoin may start its etcd (as leave() does).
  if (m.name === ctx.name || m.peerURLs.includes(ctx.peerUrl)) await disableSelf();
  await withClient(ownFirst(ctx), (c: Etcd3) =>
    etcdCall(
      `removing member ${id}`,
      c.cluster.memberRemove({ ID: target }, deadline(ctx.timeoutMs)),
    ),
  );
  return members(ctx);
}
