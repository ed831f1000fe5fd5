// SPDX-License-Identifier: Apache-2.0
/**
 * {@link OperatorStore} on etcd (docs/adr/0005 §4); passes `testkit/operator-store-conformance.ts`
 * against a real etcd. The key layout is in `layout.ts`; every multi-key write is one transaction
 * guarded by a compare on a mod revision (`cas.ts`, STYLE §7), and every value is checked when read
 * (`codec.ts`). `read()` takes all five kinds of state in one transaction, so at one revision: a
 * start record and the progress it set are always seen together.
 */
import type { Hold, MachineRecord, OperatorStore, StoredState } from '../../ports/store.ts';
import { deadline, openClient } from '../../../platform/etcd/client.ts';
import { etcdCall } from './errors.ts';
import { get, readPrefixes, type StoreCtx } from './cas.ts';
import { decode, encode } from './codec.ts';
import { appendHistory, history } from './history.ts';
import { idOf, layout } from './layout.ts';
import { advanceNotifyCursor, historyHead, notifyCursor } from './notify-cursors.ts';
import { createRollout, recordStart, updateRollout } from './rollouts.ts';
import {
  createKubeUpgrade,
  kubeDesired,
  kubeUpgrades,
  updateKubeUpgrade,
} from './kube-upgrades.ts';

export interface EtcdOperatorStoreOptions {
  /** Client URLs (`http://host:port`). */
  readonly endpoints: readonly string[];
  /** Where the store's keys live. @default '/molt/v1/operator/' */
  readonly prefix?: string;
  /** Deadline of one etcd request. @default 5000 */
  readonly requestTimeoutMs?: number;
  /** Lost compare-and-swap races one write tolerates before failing. @default 100 */
  readonly maxAttempts?: number;
}

export function createEtcdOperatorStore(o: EtcdOperatorStoreOptions): OperatorStore {
  const ctx: StoreCtx = {
    client: openClient(o.endpoints, { sendOnce: true }),
    keys: layout(o.prefix ?? '/molt/v1/operator/'),
    timeoutMs: o.requestTimeoutMs ?? 5_000,
    maxAttempts: o.maxAttempts ?? 100,
  };
  const k = ctx.keys;
  return {
    read: () => read(ctx),
    putMachine: (m: MachineRecord) => put(ctx, k.machine(m.id), encode(m)),
    removeMachine: (id) => remove(ctx, k.machine(id)),
    createRollout: (r) => createRollout(ctx, r),
    updateRollout: (id, change) => updateRollout(ctx, id, change),
    recordStart: (start, progress) => recordStart(ctx, start, progress),
    pruneStarts: async (before) => {
      // Idempotent: a deadline leaves at worst a few old records for the next prune.
      await etcdCall(
        'pruning start records',
        ctx.client.kv.deleteRange(
          { key: Buffer.from(k.starts), range_end: Buffer.from(k.startsFrom(before)) },
          deadline(ctx.timeoutMs),
        ),
      );
    },
    setHold: (machine, hold: Hold | undefined) =>
      hold === undefined ? remove(ctx, k.hold(machine)) : put(ctx, k.hold(machine), encode(hold)),
    putBlock: (b) => put(ctx, k.block(b.digest, b.pool), encode(b)),
    removeBlock: (digest, pool) => remove(ctx, k.block(digest, pool)),
    appendHistory: (event) => appendHistory(ctx, event),
    history: (options) => history(ctx, options),
    historyHead: () => historyHead(ctx),
    notifyCursor: (sink) => notifyCursor(ctx, sink),
    advanceNotifyCursor: (sink, seq) => advanceNotifyCursor(ctx, sink, seq),
    kubeUpgrades: (cluster) => kubeUpgrades(ctx, cluster),
    createKubeUpgrade: (plan) => createKubeUpgrade(ctx, plan),
    updateKubeUpgrade: (cluster, id, change) => updateKubeUpgrade(ctx, cluster, id, change),
    kubeDesired: (cluster) => kubeDesired(ctx, cluster),
    putKubeDesired: (r) => put(ctx, k.kubeDesired(r.cluster), encode(r)),
    close: () => {
      ctx.client.close();
      return Promise.resolve();
    },
  };
}

async function read(ctx: StoreCtx): Promise<StoredState> {
  const k = ctx.keys;
  const [machines = [], rollouts = [], starts = [], holds = [], blocks = []] = await readPrefixes(
    ctx,
    [k.machines, k.rollouts, k.starts, k.holds, k.blocks],
  );
  return {
    machines: machines.map((kv) => decode('machine', kv.key, kv.value)),
    rollouts: rollouts.map((kv) => decode('rollout', kv.key, kv.value)),
    starts: starts.map((kv) => decode('start', kv.key, kv.value)),
    holds: Object.fromEntries(
      holds.map((kv) => [idOf(k.holds, kv.key), decode('hold', kv.key, kv.value)]),
    ),
    blocks: blocks.map((kv) => decode('block', kv.key, kv.value)),
  };
}

/**
 * A last-writer-wins put. After an unknown outcome a re-read showing our bytes settles it; anything
 * else stays `MOLT_TIMED_OUT` (the put may still land, and repeating it is harmless).
 */
async function put(ctx: StoreCtx, key: string, value: string): Promise<void> {
  try {
    await etcdCall(
      `writing ${key}`,
      ctx.client.put(key).value(value).options(deadline(ctx.timeoutMs)).exec(),
    );
  } catch (e) {
    const now = await get(ctx, key).catch(() => undefined);
    if (now?.value.toString() !== value) throw e;
  }
}

async function remove(ctx: StoreCtx, key: string): Promise<void> {
  try {
    await etcdCall(
      `deleting ${key}`,
      ctx.client.delete().key(key).options(deadline(ctx.timeoutMs)).exec(),
    );
  } catch (e) {
    if ((await get(ctx, key).catch(() => null)) !== undefined) throw e;
  }
}
