// SPDX-License-Identifier: Apache-2.0
/**
 * Where the etcd operator store keeps what (all under one prefix, `/molt/v1/operator/` by default):
 *
 * | key | value |
 * |---|---|
 * | `machines/<id>` | {@link MachineRecord} |
 * | `rollouts/<id>` | {@link Rollout} with its per-machine progress |
 * | `starts/<at, 15 digits>/<nonce>` | {@link StartRecord}; sorted by time, so pruning is one range delete |
 * | `holds/<machine>` | {@link Hold} |
 * | `blocks/<digest>/{all,pool:<name>}` | {@link ReleaseBlock} (`blockKey`) |
 * | `history-seq` | the last history seq handed out (a counter advanced by compare-and-swap) |
 * | `history/<seq, 16 digits>` | {@link HistoryEvent} |
 * | `notify-cursors/<sink>` | the seq a notification sink has handled the history up to |
 * | `kube-upgrades/<cluster>/<id>` | {@link KubeUpgrade}: a recorded Kubernetes plan |
 * | `kube-upgrade-heads/<cluster>` | the id of the cluster's newest plan: the guard that makes "one moving plan per cluster" atomic |
 * | `kube-desired/<cluster>` | {@link KubeDesiredRecord} |
 *
 * Values are JSON, readable with `etcdctl get --prefix`. A start record's key carries a random
 * nonce: it makes the key unique to one `recordStart` call, which is how a call whose answer was
 * lost (deadline, a gRPC retry) learns from a re-read whether its own write landed.
 */
import { blockKey } from '../../ports/store.ts';
import type { Hold, HistoryEvent, MachineRecord, ReleaseBlock } from '../../ports/store.ts';
import type { Rollout, StartRecord } from '../../../core/rollout/types.ts';

export type { Hold, HistoryEvent, MachineRecord, ReleaseBlock, Rollout, StartRecord };

/** Zero-padded so that the byte order of keys is the numeric order (up to year 33658 in ms). */
const pad = (n: number, width: number): string => String(n).padStart(width, '0');

/** The keys of one store under `prefix` (which ends with `/`). */
export interface Layout {
  readonly prefix: string;
  readonly machines: string;
  readonly rollouts: string;
  readonly starts: string;
  readonly holds: string;
  readonly blocks: string;
  readonly history: string;
  readonly historySeq: string;
  readonly notifyCursors: string;
  readonly kubeUpgrades: string;
  machine(id: string): string;
  rollout(id: string): string;
  /** The key of a start at `at` written by the call identified by `nonce`. */
  start(at: number, nonce: string): string;
  /** The first start key not older than `at`: starts before it are older than `at`. */
  startsFrom(at: number): string;
  hold(machine: string): string;
  block(digest: string, pool: string | undefined): string;
  historyAt(seq: number): string;
  /** The cursor of the notification sink `sink` (its name URI-encoded: one key segment). */
  notifyCursor(sink: string): string;
  /** The plans of `cluster` (a prefix), or one of them. */
  kubeUpgrade(cluster: string, id?: string): string;
  kubeUpgradeHead(cluster: string): string;
  kubeDesired(cluster: string): string;
}

export function layout(prefix: string): Layout {
  const p = prefix.endsWith('/') ? prefix : `${prefix}/`;
  return {
    prefix: p,
    machines: `${p}machines/`,
    rollouts: `${p}rollouts/`,
    starts: `${p}starts/`,
    holds: `${p}holds/`,
    blocks: `${p}blocks/`,
    history: `${p}history/`,
    historySeq: `${p}history-seq`,
    notifyCursors: `${p}notify-cursors/`,
    machine: (id) => `${p}machines/${id}`,
    rollout: (id) => `${p}rollouts/${id}`,
    start: (at, nonce) => `${p}starts/${pad(at, 15)}/${nonce}`,
    startsFrom: (at) => `${p}starts/${pad(Math.max(0, Math.ceil(at)), 15)}`,
    hold: (machine) => `${p}holds/${machine}`,
    block: (digest, pool) => `${p}blocks/${blockKey(digest, pool)}`,
    historyAt: (seq) => `${p}history/${pad(seq, 16)}`,
    notifyCursor: (sink) => `${p}notify-cursors/${encodeURIComponent(sink)}`,
    kubeUpgrades: `${p}kube-upgrades/`,
    kubeUpgrade: (cluster, id) =>
      `${p}kube-upgrades/${encodeURIComponent(cluster)}/${id === undefined ? '' : encodeURIComponent(id)}`,
    kubeUpgradeHead: (cluster) => `${p}kube-upgrade-heads/${encodeURIComponent(cluster)}`,
    kubeDesired: (cluster) => `${p}kube-desired/${encodeURIComponent(cluster)}`,
  };
}

/** The part of `key` after `dir` (the id of a machine, rollout or hold). */
export function idOf(dir: string, key: string): string {
  return key.slice(dir.length);
}
