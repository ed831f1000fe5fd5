// SPDX-License-Identifier: Apache-2.0
/**
 * {@link MemoryOperatorStore}: the {@link OperatorStore} of `store: memory` (a demo, a single
 * process, component tests). Everything lives in this process: a restart forgets the machines,
 * rollouts, starts, holds and history. It passes `testkit/operator-store-conformance.ts` like the
 * etcd store. Instances opened on one {@link MemoryOperatorBackend} share it, as operators share
 * one etcd (in a test, a "restart" is a new instance on the same backend). Writes are
 * compare-and-swap like etcd's: each reads, yields to the event loop, and commits only if the
 * value did not change meanwhile, so concurrent callers really race and retry.
 * {@link MemoryOperatorStore.interleave} lets a test land a conflicting write exactly between a
 * write's read and its commit.
 */
import { ErrorCode, MoltError } from '../../../core/errors.ts';
import type { MachineProgress, Rollout, StartRecord } from '../../../core/rollout/types.ts';
import type {
  HistoryEvent,
  Hold,
  MachineRecord,
  NewHistoryEvent,
  OperatorStore,
  ReleaseBlock,
  StoredState,
} from '../../ports/store.ts';
import { blockKey, type KubeUpgradeStore } from '../../ports/store.ts';
import { MemoryKubeBackend, memoryKubeUpgrades } from './kube-upgrades.ts';

/** The state memory stores opened on it share: what etcd holds. */
export class MemoryOperatorBackend {
  readonly machines = new Map<string, MachineRecord>();
  /** Each rollout with the revision of its last write (the compare-and-swap guard). */
  readonly rollouts = new Map<string, { readonly value: Rollout; readonly rev: number }>();
  starts: StartRecord[] = [];
  readonly holds = new Map<string, Hold>();
  /** By `blockKey`. */
  readonly blocks = new Map<string, ReleaseBlock>();
  readonly events: HistoryEvent[] = [];
  seq = 0;
  /** Notification cursors by sink name. */
  readonly cursors = new Map<string, number>();
  rev = 0;
  /** Kubernetes plans and desired specs (`kube-upgrades.ts`). */
  readonly kube = new MemoryKubeBackend();
}

const copy = <T>(v: T): T => structuredClone(v);

export class MemoryOperatorStore implements OperatorStore {
  readonly backend: MemoryOperatorBackend;
  private readonly hooks: (() => void | Promise<void>)[] = [];
  private readonly maxAttempts: number;
  private readonly kube: KubeUpgradeStore;

  constructor(
    options: { readonly backend?: MemoryOperatorBackend; readonly maxAttempts?: number } = {},
  ) {
    this.backend = options.backend ?? new MemoryOperatorBackend();
    this.maxAttempts = options.maxAttempts ?? 100;
    this.kube = memoryKubeUpgrades(this.backend.kube);
  }

  kubeUpgrades: KubeUpgradeStore['kubeUpgrades'] = (cluster) => this.kube.kubeUpgrades(cluster);
  createKubeUpgrade: KubeUpgradeStore['createKubeUpgrade'] = (u) => this.kube.createKubeUpgrade(u);
  updateKubeUpgrade: KubeUpgradeStore['updateKubeUpgrade'] = (cluster, id, change) =>
    this.kube.updateKubeUpgrade(cluster, id, change);
  kubeDesired: KubeUpgradeStore['kubeDesired'] = (cluster) => this.kube.kubeDesired(cluster);
  putKubeDesired: KubeUpgradeStore['putKubeDesired'] = (r) => this.kube.putKubeDesired(r);

  /**
   * Run `write` once, in the next compare-and-swap write (`updateRollout`, `recordStart`), after it
   * read and before it commits, as a racing operator would: that write must then see a conflict,
   * re-read and run its change again.
   */
  interleave(write: () => void | Promise<void>): void {
    this.hooks.push(write);
  }

  read(): Promise<StoredState> {
    // In etcd's order: by id, starts by time.
    const b = this.backend;
    const byId = (x: { id: string }, y: { id: string }): number => (x.id < y.id ? -1 : 1);
    return Promise.resolve(
      copy({
        machines: [...b.machines.values()].sort(byId),
        rollouts: [...b.rollouts.values()].map((r) => r.value).sort(byId),
        starts: [...b.starts].sort((x, y) => x.at - y.at),
        holds: Object.fromEntries(b.holds),
        blocks: [...b.blocks.entries()].sort(([x], [y]) => (x < y ? -1 : 1)).map(([, v]) => v),
      }),
    );
  }

  putMachine(machine: MachineRecord): Promise<void> {
    this.backend.machines.set(machine.id, copy(machine));
    return Promise.resolve();
  }

  removeMachine(id: string): Promise<void> {
    this.backend.machines.delete(id);
    return Promise.resolve();
  }

  createRollout(rollout: Rollout): Promise<void> {
    const b = this.backend;
    if (b.rollouts.has(rollout.id))
      return Promise.reject(
        new MoltError(ErrorCode.RolloutExists, `rollout ${rollout.id} already exists`),
      );
    b.rollouts.set(rollout.id, { value: copy(rollout), rev: ++b.rev });
    return Promise.resolve();
  }

  async updateRollout(id: string, change: (current: Rollout) => Rollout): Promise<Rollout> {
    return this.cas(id, (current) => {
      const next = change(current);
      if (next.id !== id)
        throw new MoltError(ErrorCode.BadInput, `an update of rollout ${id} may not change its id`);
      return { next, result: next };
    });
  }

  async recordStart(start: StartRecord, progress: MachineProgress): Promise<void> {
    if (!Number.isSafeInteger(start.at) || start.at < 0)
      throw new MoltError(ErrorCode.BadInput, `a start time must be epoch ms, not ${start.at}`);
    await this.cas(start.rollout, (current) => {
      const had = current.machines[start.machine];
      if (had !== undefined && had.phase !== 'Pending')
        throw new MoltError(
          ErrorCode.AlreadyStarted,
          `machine ${start.machine} already has progress (${had.phase}) in rollout ${start.rollout}`,
        );
      const next = { ...current, machines: { ...current.machines, [start.machine]: progress } };
      return { next, result: undefined, also: () => this.backend.starts.push(copy(start)) };
    });
  }

  pruneStarts(before: number): Promise<void> {
    this.backend.starts = this.backend.starts.filter((s) => s.at >= before);
    return Promise.resolve();
  }

  setHold(machine: string, hold: Hold | undefined): Promise<void> {
    if (hold === undefined) this.backend.holds.delete(machine);
    else this.backend.holds.set(machine, copy(hold));
    return Promise.resolve();
  }

  putBlock(block: ReleaseBlock): Promise<void> {
    this.backend.blocks.set(blockKey(block.digest, block.pool), copy(block));
    return Promise.resolve();
  }

  removeBlock(digest: string, pool: string | undefined): Promise<void> {
    this.backend.blocks.delete(blockKey(digest, pool));
    return Promise.resolve();
  }

  appendHistory(event: NewHistoryEvent): Promise<HistoryEvent> {
    const stored: HistoryEvent = { seq: ++this.backend.seq, ...copy(event) };
    this.backend.events.push(stored);
    return Promise.resolve(copy(stored));
  }

  history(options: { afterSeq?: number; limit?: number } = {}): Promise<HistoryEvent[]> {
    const after = options.afterSeq ?? 0;
    const events = this.backend.events.filter((e) => e.seq > after);
    return Promise.resolve(copy(events.slice(0, Math.max(0, options.limit ?? events.length))));
  }

  historyHead(): Promise<number> {
    return Promise.resolve(this.backend.seq);
  }

  notifyCursor(sink: string): Promise<number | undefined> {
    return Promise.resolve(this.backend.cursors.get(sink));
  }

  advanceNotifyCursor(sink: string, seq: number): Promise<void> {
    if (!Number.isSafeInteger(seq) || seq < 0)
      return Promise.reject(
        new MoltError(ErrorCode.BadInput, `a notification cursor must be a seq, not ${seq}`),
      );
    const cursors = this.backend.cursors;
    cursors.set(sink, Math.max(seq, cursors.get(sink) ?? 0));
    return Promise.resolve();
  }

  close(): Promise<void> {
    return Promise.resolve();
  }

  /** Read → change → yield (and run an interleaved write) → commit if the revision held. */
  private async cas<T>(
    id: string,
    change: (current: Rollout) => { next: Rollout; result: T; also?: () => void },
  ): Promise<T> {
    const b = this.backend;
    for (let attempt = 0; attempt < this.maxAttempts; attempt++) {
      const read = b.rollouts.get(id);
      if (read === undefined)
        throw new MoltError(ErrorCode.RolloutNotFound, `rollout ${id} does not exist`);
      const { next, result, also } = change(copy(read.value));
      await new Promise<void>((resolve) => setImmediate(resolve));
      await this.hooks.shift()?.();
      if (b.rollouts.get(id)?.rev !== read.rev) continue;
      b.rollouts.set(id, { value: copy(next), rev: ++b.rev });
      also?.();
      return copy(result);
    }
    throw new MoltError(ErrorCode.EtcdUnhealthy, `updating rollout ${id} lost too many races`, {
      retryable: true,
    });
  }
}
