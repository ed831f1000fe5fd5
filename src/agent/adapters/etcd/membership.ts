// SPDX-License-Identifier: Apache-2.0
/**
 * Leaving and rejoining the etcd cluster (docs/adr/0004 §5). Both look this member up by name and
 * peer URL first, so a re-run after a crash picks up where the last run stopped:
 *
 * | this member in the list | rejoin as new member does |
 * |---|---|
 * | absent (left) | stop etcd, wipe the data dir, `member add --learner`, join spec, start, promote |
 * | learner (added, maybe started) | join spec, start, promote |
 * | voter, data dir holds a member | start (nothing to rejoin) |
 * | voter, data dir wiped | remove it, then as absent |
 *
 * A removed member's data dir can never start again (etcd exits at once, verified on 3.4.23), so
 * every rejoin after a leave wipes it.
 */
import { access, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { IMember } from 'etcd3';
import { ErrorCode, MoltError } from '../../../core/errors.ts';
import type { MemberHealth } from '../../ports/etcd-member.ts';
import { deadline, isTimeout, withClient } from '../../../platform/etcd/client.ts';
import { etcdCall, toMoltError } from './errors.ts';
import { writeJoinSpec } from './join-spec.ts';
import { lookup, peersFirst, type MemberCtx } from './member-ctx.ts';
import { memberName } from './member-probe.ts';

/**
 * `member remove` of this member; absent already = done; a timed-out remove is settled by a re-read.
 * The service is disabled first: from here on only a rejoin as a new member may start etcd.
 */
export async function leave(ctx: MemberCtx): Promise<void> {
  await ctx.service.disable?.();
  const { me } = await lookup(ctx);
  if (me === undefined) return;
  try {
    await withClient(peersFirst(ctx), (c) =>
      etcdCall(
        `removing member ${memberName(me)}`,
        c.cluster.memberRemove({ ID: me.ID }, deadline(ctx.timeoutMs)),
      ),
    );
  } catch (e) {
    // Unknown outcome, or "member not found" after a retried remove: the member list decides.
    if ((await lookup(ctx)).me !== undefined)
      throw isTimeout(e) ? e : toMoltError(e, 'removing this member');
  }
}

/** Start the member again, as a new member if asked; resolves once it is healthy and caught up. */
export async function rejoin(
  ctx: MemberCtx,
  o: { readonly asNewMember: boolean },
  health: () => Promise<MemberHealth>,
): Promise<void> {
  if (o.asNewMember) await joinAsNew(ctx);
  else await restart(ctx);
  await waitHealthy(ctx, health);
}

/** Start etcd on its data dir; fails at once if this member was removed (it can never start again). */
async function restart(ctx: MemberCtx): Promise<void> {
  await ctx.service.startAll();
  const found = await lookup(ctx).catch(() => undefined); // no quorum yet: waitHealthy decides
  if (found !== undefined && found.me === undefined)
    throw new MoltError(
      ErrorCode.EtcdUnhealthy,
      `${ctx.name} is no longer an etcd member; it must rejoin as a new member`,
    );
}

const isVoter = (m: IMember): boolean => !m.isLearner && m.name !== '';

async function joinAsNew(ctx: MemberCtx): Promise<void> {
  let { members, me } = await lookup(ctx);
  if (me !== undefined && isVoter(me)) {
    if (await hasData(ctx.dataDir)) {
      await ctx.service.enable?.();
      await ctx.service.startAll();
      return;
    }
    await leave(ctx);
    me = undefined;
  }
  if (me === undefined) ({ members, me } = await addLearner(ctx));
  await writeJoinSpec(ctx.dataDir, {
    initialCluster: initialCluster(ctx, members, me),
    state: 'existing',
  });
  await ctx.service.enable?.();
  await ctx.service.startAll();
  if (me.isLearner) await promote(ctx, me.ID);
}

async function hasData(dataDir: string): Promise<boolean> {
  return access(join(dataDir, 'member', 'wal')).then(
    () => true,
    () => false,
  );
}

/** Stop etcd, wipe its data dir, and add this member back as a learner with the same peer URL. */
async function addLearner(ctx: MemberCtx): Promise<{ members: IMember[]; me: IMember }> {
  await ctx.service.stopAll();
  await rm(ctx.dataDir, { recursive: true, force: true });
  const until = performance.now() + (ctx.rejoinTimeoutMs ?? 60_000);
  for (;;) {
    try {
      const res = await withClient(peersFirst(ctx), (c) =>
        etcdCall(
          'adding this member as a learner',
          c.cluster.memberAdd(
            { peerURLs: [ctx.peerUrl], isLearner: true },
            deadline(ctx.timeoutMs),
          ),
        ),
      );
      return { members: res.members, me: res.member };
    } catch (e) {
      // Unknown outcome, or "peer URL exists" after a retried add: the member list decides.
      const after = await lookup(ctx);
      if (after.me !== undefined) return { members: after.members, me: after.me };
      // etcd refuses reconfiguration ("unhealthy cluster") until every voter has been
      // connected for 5 s (strict-reconfig-check), e.g. right after a member restarted.
      if (!toMoltError(e, '').retryable || performance.now() >= until)
        throw toMoltError(e, 'adding this member');
    }
    await sleep(500);
  }
}

/** `--initial-cluster` for joining: every member by name (this one by ours; etcd matches peer URLs). */
function initialCluster(ctx: MemberCtx, members: readonly IMember[], me: IMember): string {
  return members
    .map(
      (m) => `${m.ID === me.ID ? ctx.name : m.name || `unstarted-${m.ID}`}=${m.peerURLs[0] ?? ''}`,
    )
    .join(',');
}

/** Promote the learner as soon as etcd counts it in sync with the leader (it refuses before). */
async function promote(ctx: MemberCtx, id: string): Promise<void> {
  const until = performance.now() + (ctx.rejoinTimeoutMs ?? 60_000);
  for (;;) {
    try {
      await withClient(peersFirst(ctx), (c) =>
        c.cluster.memberPromote({ ID: id }, deadline(ctx.timeoutMs)),
      );
      return;
    } catch (e) {
      // "not a learner" after a promote whose answer was lost: the member list decides.
      const { me } = await lookup(ctx);
      if (me !== undefined && !me.isLearner) return;
      if (performance.now() >= until)
        throw new MoltError(
          ErrorCode.EtcdUnhealthy,
          `learner ${ctx.name} was not promoted in time: ${toMoltError(e, 'promote').message}`,
          { retryable: true },
        );
    }
    await sleep(200);
  }
}

async function waitHealthy(ctx: MemberCtx, health: () => Promise<MemberHealth>): Promise<void> {
  const until = performance.now() + (ctx.rejoinTimeoutMs ?? 60_000);
  for (;;) {
    const h = await health().catch((e: unknown) => ({
      healthy: false,
      message: toMoltError(e, 'health').message,
    }));
    if (h.healthy) return;
    if (performance.now() >= until)
      throw new MoltError(
        ErrorCode.EtcdUnhealthy,
        `etcd member ${ctx.name} did not become healthy: ${h.message ?? 'unhealthy'}`,
        { retryable: true },
      );
    await sleep(250);
  }
}
