// SPDX-License-Identifier: Apache-2.0
/** {@link EtcdRecovery} on a real etcd member (docs/adr/0012 §6); see admin.ts and restore.ts. */
import type { EtcdMember } from '../../ports/etcd-member.ts';
import type { EtcdRecovery } from '../../ports/etcd-recovery.ts';
import type { Services } from '../../ports/services.ts';
import { forfeit, members, removeMember, snapshot } from './admin.ts';
import { createEtcdutlRunner, etcdutlPath, type EtcdutlRunner } from './etcdutl.ts';
import type { EtcdMemberOptions, MemberCtx } from './member-ctx.ts';
import { rejoin, restore } from './restore.ts';

export interface EtcdRecoveryOptions extends EtcdMemberOptions {
  /** Every service of the machine (components and etcd), stopped around a restore or rejoin. */
  readonly services: Services;
  /** This machine's member (its rejoin as a new member). */
  readonly member: EtcdMember;
  /** The etcd binary; etcdutl is looked for beside it unless `etcdutl` names it. */
  readonly binary?: string | undefined;
  readonly etcdutl?: string | undefined;
  /** Tests: a stand-in for etcdutl. */
  readonly runEtcdutl?: EtcdutlRunner;
  /** How long a snapshot may stream. @default 600000 */
  readonly snapshotTimeoutMs?: number;
  readonly now?: () => Date;
}

export function createEtcdRecovery(o: EtcdRecoveryOptions): EtcdRecovery {
  const ctx: MemberCtx = { ...o, timeoutMs: o.requestTimeoutMs ?? 5_000 };
  const deps = {
    ctx,
    services: o.services,
    etcd: o.service,
    member: o.member,
    etcdutl: o.runEtcdutl ?? createEtcdutlRunner(etcdutlPath(o)),
    now: o.now ?? (() => new Date()),
  };
  return {
    members: () => members(ctx),
    snapshot: (signal) => snapshot(ctx, signal, o.snapshotTimeoutMs ?? 600_000),
    forfeitLeadership: (to) => forfeit(ctx, to),
    removeMember: (id) =>
      removeMember(ctx, id, async () => {
        await o.service.disable?.();
      }),
    async restore(file) {
      await restore(deps, file);
      return members(ctx);
    },
    async rejoin() {
      await rejoin(deps);
      return members(ctx);
    },
  };
}
