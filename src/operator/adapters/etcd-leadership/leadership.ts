// SPDX-License-Identifier: Apache-2.0
/**
 * {@link Leadership} on etcd (docs/adr/0005 §4); passes `testkit/leadership-conformance.ts` on a
 * real etcd. The leader is whoever created the leader key (`{id, since}`) on an etcd lease it
 * keeps alive:
 * - campaign: create-if-absent in one transaction; while another holds the key, poll until it is
 *   gone. A create whose answer was lost is settled by re-reading the key (ours iff it is on our
 *   lease); when even that fails the lease is revoked, which deletes a late key with it.
 * - leading: every TTL/3 the lease is renewed by id and the key re-read; a failed renewal is tried
 *   again at once (another member may answer). The claim is lost (and `onLost` called once) when
 *   etcd answers TTL 0, when the key is gone or on another lease, or when renewals failed for so
 *   long that the lease may have expired: `isLeader()` turns false by then anyway, one renewal
 *   period before the lease could expire in etcd.
 * - resign: delete the key if it is still on our lease, then revoke the lease.
 * - close: stop renewing without resigning (the claim expires at the TTL, as for a crash); call
 *   `resign()` first for a prompt handover.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { ErrorCode, MoltError } from '../../../core/errors.ts';
import type { Leadership } from '../../ports/leadership.ts';
import { openClient } from '../../../platform/etcd/client.ts';
import { settleWithin } from '../../../platform/etcd/settle-within.ts';
import {
  createClaim,
  deleteClaim,
  grant,
  keepAliveOnce,
  readClaim,
  revokeQuietly,
  type ClaimCtx,
} from './claim.ts';

export interface EtcdLeadershipOptions {
  readonly endpoints: readonly string[];
  /** This operator's identity, written into the claim. */
  readonly id: string;
  /** @default '/molt/v1/operator/leader' */
  readonly key?: string;
  /** How long a dead leader blocks the others. @default 10 */
  readonly ttlSeconds?: number;
  /** How often a waiting campaigner looks at the key. @default min(1000, TTL/4) */
  readonly pollMs?: number;
  /** Deadline of each etcd request. @default 5000 */
  readonly requestTimeoutMs?: number;
}

interface Lead {
  readonly leaseId: string;
  /** `performance.now()` until which the lease surely lives: last renewal sent + TTL. */
  validUntil: number;
}

interface State {
  readonly c: ClaimCtx;
  readonly ttlMs: number;
  readonly pollMs: number;
  readonly renewMs: number;
  readonly stop: AbortController;
  readonly listeners: (() => void)[];
  lead: Lead | undefined;
  renewer: NodeJS.Timeout | undefined;
  campaigning: Promise<void> | undefined;
}

export function createEtcdLeadership(o: EtcdLeadershipOptions): Leadership {
  const ttlSeconds = o.ttlSeconds ?? 10;
  const s: State = {
    c: {
      client: openClient(o.endpoints),
      key: o.key ?? '/molt/v1/operator/leader',
      id: o.id,
      timeoutMs: o.requestTimeoutMs ?? 5_000,
    },
    ttlMs: ttlSeconds * 1000,
    pollMs: o.pollMs ?? Math.min(1000, (ttlSeconds * 1000) / 4),
    renewMs: (ttlSeconds * 1000) / 3,
    stop: new AbortController(),
    listeners: [],
    lead: undefined,
    renewer: undefined,
    campaigning: undefined,
  };
  return {
    id: o.id,
    campaign: () => campaign(s),
    isLeader: () => leads(s),
    leader: async () => (await readClaim(s.c))?.id,
    onLost: (listener) => {
      s.listeners.push(listener);
    },
    resign: () => resign(s),
    close: async () => {
      s.stop.abort();
      stopRenewing(s);
      s.lead = undefined; // no revoke: like a crash, the claim expires at its TTL
      s.c.client.close();
      await s.campaigning?.catch(() => undefined);
    },
  };
}

/** Read through a call: `close()` may have run during any await. */
const isClosed = (s: State): boolean => s.stop.signal.aborted;

function closed(s: State): MoltError {
  return new MoltError(ErrorCode.NotLeader, `operator ${s.c.id} stopped campaigning: closed`);
}

/** Leading: a claim renewed within its TTL. */
const leads = (s: State): boolean => s.lead !== undefined && performance.now() < s.lead.validUntil;

function campaign(s: State): Promise<void> {
  if (isClosed(s)) return Promise.reject(closed(s));
  if (leads(s)) return Promise.resolve();
  s.campaigning ??= campaignLoop(s).finally(() => {
    s.campaigning = undefined;
  });
  return s.campaigning;
}

async function campaignLoop(s: State): Promise<void> {
  for (;;) {
    if (isClosed(s)) throw closed(s);
    if (leads(s)) {
      s.renewer ??= startRenewing(s);
      return;
    }
    // Held but not renewed in time: the renewer renews it or gives it up; wait for that.
    if (s.lead !== undefined) {
      await sleep(s.pollMs, undefined, { signal: s.stop.signal }).catch(() => undefined);
      continue;
    }
    // etcd unreachable counts as "not now": keep trying until closed. Each attempt has a bound of
    // its own, whatever its calls' deadlines: on a starved lab host an operator that had lost
    // leadership was seen waiting in one attempt for good (15 minutes, no etcd call answered or
    // failed, its leader key long gone). A claim won after the bound is taken up at the top of
    // the loop (`leads`).
    const won = await settleWithin(
      tryClaim(s),
      4 * s.c.timeoutMs,
      lateClaim,
      () => undefined,
    ).catch(() => false);
    if (won && isClosed(s)) {
      await resign(s);
      throw closed(s);
    }
    if (won) {
      s.renewer ??= startRenewing(s);
      return;
    }
    await sleep(s.pollMs, undefined, { signal: s.stop.signal }).catch(() => undefined);
  }
}

const lateClaim = (): Error => new Error('no answer from etcd to the claim in time');

/** Create the key on a fresh lease if it is absent; true when we now lead. */
async function tryClaim(s: State): Promise<boolean> {
  if ((await readClaim(s.c)) !== undefined) return false;
  const grantedAt = performance.now();
  const leaseId = await grant(s.c, s.ttlMs / 1000);
  let won: boolean;
  try {
    won = await createClaim(s.c, leaseId);
  } catch {
    // The create may still commit: ours iff the key is on our lease. Unknown → revoke (below),
    // which deletes a key that lands late together with its lease.
    won = (await readClaim(s.c).catch(() => undefined))?.leaseId === leaseId;
  }
  if (!won) {
    await revokeQuietly(s.c, leaseId);
    return false;
  }
  s.lead = { leaseId, validUntil: grantedAt + s.ttlMs };
  return true;
}

function startRenewing(s: State): NodeJS.Timeout {
  let busy = false;
  const renewer = setInterval(() => {
    if (busy) return;
    busy = true;
    void renew(s).finally(() => {
      busy = false;
    });
  }, s.renewMs);
  renewer.unref();
  return renewer;
}

function stopRenewing(s: State): void {
  clearInterval(s.renewer);
  s.renewer = undefined;
}

/**
 * One renewal: keep the lease alive and check the key is still on it. A failed attempt is tried
 * again at once, a little later each time, until the claim must be given up: each attempt may
 * dial another member, so one member that is down (a control-plane machine rebooting in a
 * rollout) does not cost the leadership, as waiting for the next period after each failure did.
 */
async function renew(s: State): Promise<void> {
  const lead = s.lead;
  for (let attempt = 0; lead !== undefined && s.lead === lead; attempt++) {
    const sentAt = performance.now();
    try {
      const ttl = await keepAliveOnce(s.c, lead.leaseId);
      const claim = ttl > 0 ? await readClaim(s.c) : undefined;
      if (s.lead !== lead) return; // resigned or closed meanwhile
      if (claim?.leaseId !== lead.leaseId) {
        lose(s);
        return;
      }
      lead.validUntil = sentAt + s.ttlMs;
      return;
    } catch {
      // Unreachable or no quorum: give up one period before the lease could expire in etcd, so
      // this operator stops acting before another can take over.
      if (s.lead !== lead) return;
      if (performance.now() >= lead.validUntil - s.renewMs) {
        lose(s);
        return;
      }
    }
    // Short: a member that is down refuses at once, and etcd3 does not skip it for streams (its
    // breaker counts the stream's opening as a success), so the next try dials at random again.
    const pause = Math.min(25 * 2 ** attempt, 100);
    await sleep(pause, undefined, { signal: s.stop.signal }).catch(() => undefined);
  }
}

function lose(s: State): void {
  const lead = s.lead;
  stopRenewing(s);
  s.lead = undefined;
  if (lead !== undefined) void revokeQuietly(s.c, lead.leaseId);
  for (const l of s.listeners) {
    try {
      l();
    } catch {
      // a listener's failure must not keep the others from hearing of the loss
    }
  }
}

async function resign(s: State): Promise<void> {
  const lead = s.lead;
  stopRenewing(s);
  s.lead = undefined;
  if (lead === undefined) return;
  try {
    await deleteClaim(s.c, lead.leaseId);
  } catch {
    // the revoke below deletes the key with its lease
  }
  await revokeQuietly(s.c, lead.leaseId);
}
