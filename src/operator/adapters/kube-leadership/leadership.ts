// SPDX-License-Identifier: Apache-2.0
/**
 * {@link Leadership} through a Kubernetes `coordination.k8s.io/v1` Lease (docs/adr/0006), for
 * operators that run in the cluster they upgrade, the way client-go's leader election works:
 *
 * - The claim is the Lease's `holderIdentity`, renewed every TTL/3 by a compare-and-swap on the
 *   Lease's `resourceVersion` (replace), so two campaigners can never both win a write.
 * - Expiry is judged by the campaigner's own clock, not the holder's: a record counts as expired
 *   once it has not changed for `leaseDurationSeconds` since this process first saw it (client-go's
 *   "observed time"), so clock skew between hosts cannot shorten a live leader's term.
 * - The leader stops calling itself leader one renewal period before its claim could expire if
 *   renewals fail, and is told through `onLost` when the Lease names someone else or is gone.
 * - Resigning empties `holderIdentity`, so a standby takes over at once — within one poll: a
 *   standby reads the Lease every TTL/4, at most once a second (client-go: every 2 s). It used to
 *   read four times a second: each read costs milliseconds of CPU in client-node, a standby on an
 *   emulated node idled at a quarter of its CPU, and a takeover waits a whole TTL anyway.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import {
  CoordinationV1Api,
  V1MicroTime,
  type KubeConfig,
  type V1Lease,
} from '@kubernetes/client-node';
import { ErrorCode, MoltError } from '../../../core/errors.ts';
import { kubeError, statusOf } from '../../../platform/kube/client.ts';
import type { Leadership } from '../../ports/leadership.ts';

export interface KubeLeadershipOptions {
  readonly kc: KubeConfig;
  readonly namespace: string;
  /** @default 'molt-operator' */
  readonly name?: string;
  readonly id: string;
  readonly ttlSeconds: number;
}

interface Observed {
  readonly key: string;
  readonly at: number;
}

export function createKubeLeadership(o: KubeLeadershipOptions): Leadership {
  const api = o.kc.makeApiClient(CoordinationV1Api);
  const name = o.name ?? 'molt-operator';
  const { namespace, id } = o;
  const ttlMs = o.ttlSeconds * 1000;
  const renewMs = ttlMs / 3;
  const pollMs = Math.min(1000, ttlMs / 4);
  let observed: Observed | undefined;
  // Read through functions in loops: they change while the loops await.
  const state = { leading: false, closed: false, lastRenew: 0 };
  const active = (): boolean => state.leading && !state.closed;
  const stop = new AbortController();
  const lostListeners: (() => void)[] = [];

  const read = async (): Promise<V1Lease | undefined> => {
    try {
      return await api.readNamespacedLease({ name, namespace });
    } catch (e) {
      if (statusOf(e) === 404) return undefined;
      throw kubeError(e, `read the Lease ${namespace}/${name}`);
    }
  };
  const holderOf = (l: V1Lease | undefined): string | undefined => {
    const h = l?.spec?.holderIdentity;
    return h === undefined || h === '' ? undefined : h;
  };
  /** The holder, unless the record has not changed for a whole lease duration as seen from here. */
  const liveHolder = (l: V1Lease | undefined): string | undefined => {
    const holder = holderOf(l);
    if (holder === undefined) return undefined;
    // The client hands MicroTime back as a string or a Date depending on the path: compare as text.
    const key = `${holder}@${String(l?.spec?.renewTime ?? '')}`;
    const now = Date.now();
    if (observed?.key !== key) observed = { key, at: now };
    const duration = (l?.spec?.leaseDurationSeconds ?? o.ttlSeconds) * 1000;
    return now - observed.at > duration ? undefined : holder;
  };
  const claim = (l: V1Lease | undefined, holder: string): V1Lease => ({
    metadata: {
      name,
      namespace,
      ...(l?.metadata?.resourceVersion !== undefined && {
        resourceVersion: l.metadata.resourceVersion,
      }),
    },
    spec: {
      holderIdentity: holder,
      leaseDurationSeconds: o.ttlSeconds,
      renewTime: new V1MicroTime(),
      ...(holder === id && holderOf(l) !== id && { acquireTime: new V1MicroTime() }),
    },
  });
  /** Write `holder` over `l` (create when absent); false when someone else wrote first. */
  const write = async (l: V1Lease | undefined, holder: string): Promise<boolean> => {
    try {
      if (l === undefined) await api.createNamespacedLease({ namespace, body: claim(l, holder) });
      else await api.replaceNamespacedLease({ name, namespace, body: claim(l, holder) });
      return true;
    } catch (e) {
      if (statusOf(e) === 409) return false;
      throw kubeError(e, `write the Lease ${namespace}/${name}`);
    }
  };
  const lose = (): void => {
    if (!state.leading) return;
    state.leading = false;
    for (const f of lostListeners) f();
  };
  const renewLoop = async (): Promise<void> => {
    while (active()) {
      await sleep(renewMs, undefined, { signal: stop.signal }).catch(() => undefined);
      if (!active()) return;
      try {
        const l = await read();
        if (holderOf(l) !== id) {
          lose();
          return;
        }
        if (await write(l, id)) state.lastRenew = Date.now();
      } catch {
        // The API server may be restarting: keep trying until the claim could have expired.
      }
      if (Date.now() - state.lastRenew > ttlMs - renewMs) lose();
    }
  };
  const leads = (): boolean => active() && Date.now() - state.lastRenew < ttlMs - renewMs;
  const notLeader = (): MoltError =>
    new MoltError(ErrorCode.NotLeader, `leader election for ${id} was closed`);

  return {
    id,
    async campaign() {
      for (;;) {
        if (state.closed) throw notLeader();
        if (state.leading && leads()) return;
        // Held but not renewed in time: the renewal loop renews it or gives it up; wait for that.
        if (state.leading) {
          await sleep(pollMs, undefined, { signal: stop.signal }).catch(() => undefined);
          continue;
        }
        const l = await read().catch(() => undefined);
        const holder = liveHolder(l);
        if ((holder === undefined || holder === id) && (await write(l, id).catch(() => false))) {
          state.leading = true;
          state.lastRenew = Date.now();
          void renewLoop();
          return;
        }
        await sleep(pollMs, undefined, { signal: stop.signal }).catch(() => undefined);
      }
    },
    isLeader: leads,
    async leader() {
      return liveHolder(await read());
    },
    onLost(listener) {
      lostListeners.push(listener);
    },
    async resign() {
      if (!state.leading) return;
      state.leading = false;
      // A renewal already under way may land first and make this write conflict: read again (no
      // new renewal starts once leading is false).
      const attempts = 5;
      for (let attempt = 0; attempt < attempts; attempt++) {
        const l = await read();
        if (holderOf(l) !== id || (await write(l, ''))) return;
      }
      throw new MoltError(
        ErrorCode.ResignFailed,
        `could not release the Lease ${namespace}/${name}: ${String(attempts)} writes in a row lost to another`,
        { hint: `another operator takes over when the claim expires (${String(o.ttlSeconds)} s)` },
      );
    },
    close() {
      state.closed = true;
      state.leading = false;
      stop.abort();
      return Promise.resolve();
    },
  };
}
