// SPDX-License-Identifier: Apache-2.0
/**
 * Where the operator keeps everything that must survive its restart (docs/adr/0005 §4): the
 * machines it manages, the rollouts with per-machine progress, the start history that rate limits
 * count, holds, blocked releases, the event history, and how far each webhook sink has been
 * sent it. Implementations: the memory store (`adapters/memory-store`), the etcd store
 * (`adapters/etcd-store`) and the Kubernetes store (`adapters/kube-store`, OperatorRecords), all
 * passing `testkit/operator-store-conformance.ts`.
 *
 * The invariant this port carries (DESIGN invariant 6): a machine start is recorded — start record
 * and `InFlight` progress in one atomic write — *before* the agent is asked to upgrade, and the
 * write refuses a machine that already has progress in that rollout. So an operator killed at any
 * point and restarted never starts a machine twice and never forgets a start a rate limit counts.
 */
import type { HistoryKind } from '../../core/rollout/vocabulary.ts';
import type { MachineProgress, Role, Rollout, StartRecord } from '../../core/rollout/types.ts';
import type { KubeUpgradeStore } from './kube-upgrade-store.ts';

export type { KubeDesiredRecord, KubeUpgradeStore } from './kube-upgrade-store.ts';

/** A machine the operator manages: identity, placement and how to reach its agent. */
export interface MachineRecord {
  readonly id: string;
  /** The agent's `https://host:port`. */
  readonly endpoint: string;
  readonly role: Role;
  readonly pool: string;
  readonly cluster?: string;
  readonly labels: Readonly<Record<string, string>>;
  /**
   * Registered through the API (`POST /v1/machines`) rather than listed in the fleet file: such a
   * machine survives the operator's start-up sync with the file until it is deregistered.
   */
  readonly registered?: boolean;
  /**
   * Taken from a Node labelled `node-restriction.kubernetes.io/molt-pool` (docs/adr/0011): kept
   * while the Node is.
   */
  readonly fromNode?: boolean;
}

/**
 * A person's hold on a machine: no upgrade starts on it before `until` — or, with `version`, a
 * pin: the machine stays on that release, rollouts to any other skip it (docs/adr/0011).
 */
export interface Hold {
  readonly reason: string;
  /** Epoch ms. */
  readonly until: number;
  readonly by?: string;
  /** A pin to this release rather than a hold (declared by a `MachineHold`'s `spec.version`). */
  readonly version?: string;
}

/**
 * A release that must not be offered again: blocked by a person (`molt releases block`)
 * or by the operator when a rollout to it halted. Discovery never creates a rollout to a blocked
 * release for the pools the block covers, and a rollout already running towards it is paused.
 */
export interface ReleaseBlock {
  readonly digest: string;
  /** The pool it is blocked for; absent: every pool. */
  readonly pool?: string;
  /** The release's version when it was blocked, for people (the digest is what counts). */
  readonly version?: string;
  readonly reason: string;
  /** Who blocked it: a certificate name, or `operator` for a halted rollout. */
  readonly by: string;
  /** Epoch ms. */
  readonly at: number;
  /** The halted rollout that blocked it. */
  readonly rollout?: string;
}

/**
 * How stores key and order blocks: by digest, then the every-pool block (`all`) before the
 * pools' (`pool:<name>`, the name URI-encoded so it is one key segment whatever it holds).
 */
export const blockKey = (digest: string, pool: string | undefined): string =>
  `${digest}/${pool === undefined ? 'all' : `pool:${encodeURIComponent(pool)}`}`;

/** One line of the operator's history (what `molt rollout status` and the dashboard show). */
export interface HistoryEvent {
  /** Assigned by the store: increasing, never reused. */
  readonly seq: number;
  /** Epoch ms. */
  readonly at: number;
  readonly kind: HistoryKind;
  readonly rollout?: string;
  readonly machine?: string;
  readonly message: string;
  readonly data?: Readonly<Record<string, unknown>>;
}

export type NewHistoryEvent = Omit<HistoryEvent, 'seq'>;

/** Everything the store holds, read at one revision. */
export interface StoredState {
  readonly machines: readonly MachineRecord[];
  readonly rollouts: readonly Rollout[];
  readonly starts: readonly StartRecord[];
  readonly holds: Readonly<Record<string, Hold>>;
  /** Blocked releases, by digest then pool (a block for every pool first). */
  readonly blocks: readonly ReleaseBlock[];
}

export interface OperatorStore extends KubeUpgradeStore {
  read(): Promise<StoredState>;
  putMachine(machine: MachineRecord): Promise<void>;
  removeMachine(id: string): Promise<void>;
  /** Create a rollout; `MOLT_ROLLOUT_EXISTS` when the id is taken. */
  createRollout(rollout: Rollout): Promise<void>;
  /**
   * Compare-and-set update of one rollout: `change` gets the stored value and returns the new one
   * (it may run more than once when another writer got in between, so it must be pure; it may not
   * change the id: `MOLT_BAD_INPUT`). `MOLT_ROLLOUT_NOT_FOUND` if absent. Returns the stored result.
   * A write whose outcome stays unknown (no quorum) fails with `MOLT_TIMED_OUT` or
   * `MOLT_ETCD_UNHEALTHY`; it may still land later, so the caller re-reads rather than assuming
   * either outcome.
   */
  updateRollout(id: string, change: (current: Rollout) => Rollout): Promise<Rollout>;
  /**
   * Atomically append `start` and set the rollout's progress for `start.machine` to `progress`
   * (normally `{phase: 'InFlight', startedAt}`), refusing with `MOLT_ALREADY_STARTED` when that
   * machine already has progress in the rollout (an explicit `Pending` entry is not progress).
   * `MOLT_ROLLOUT_NOT_FOUND` for an unknown rollout; `MOLT_BAD_INPUT` when `start.at` is not
   * non-negative integer epoch ms. Start records come back from `read()` oldest first.
   */
  recordStart(start: StartRecord, progress: MachineProgress): Promise<void>;
  /** Drop start records older than `before` (epoch ms); rate limits only look back one period. */
  pruneStarts(before: number): Promise<void>;
  setHold(machine: string, hold: Hold | undefined): Promise<void>;
  /** Block a release for `block.pool` (every pool when absent), replacing such a block. */
  putBlock(block: ReleaseBlock): Promise<void>;
  /** Lift the block of `digest` for `pool` (the every-pool block when undefined); idempotent. */
  removeBlock(digest: string, pool: string | undefined): Promise<void>;
  appendHistory(event: NewHistoryEvent): Promise<HistoryEvent>;
  /** History after `afterSeq` (all when undefined), oldest first, at most `limit`. */
  history(options?: { afterSeq?: number; limit?: number }): Promise<HistoryEvent[]>;
  /** The seq of the last history event handed out; 0 before the first. */
  historyHead(): Promise<number>;
  /**
   * How far the notification sink named `sink` has handled the history (docs/adr/0009): the seq
   * of the last event it delivered or gave up on; undefined before its first.
   */
  notifyCursor(sink: string): Promise<number | undefined>;
  /**
   * Move `sink`'s cursor to `seq`, forward only: a seq at or below the stored one changes nothing,
   * so the late write of a deposed leader never moves it back (which would send events again).
   * `MOLT_BAD_INPUT` when `seq` is not a non-negative integer.
   */
  advanceNotifyCursor(sink: string, seq: number): Promise<void>;
  close(): Promise<void>;
}
