// SPDX-License-Identifier: Apache-2.0
/**
 * {@link Workloads} in memory: workloads put in by tests, image changes with the adapter's
 * all-or-nothing `test` semantics, and a rollout that takes `rolloutReads` progress reads to
 * finish — or never finishes on an image in {@link FakeWorkloads.unready}.
 */
import type { WorkloadKind } from '../../core/images/types.ts';
import { workloadEdited, workloadNotFound } from '../../core/images/workload-errors.ts';
import type { WorkloadProgress } from '../../core/images/workload-progress.ts';
import type { WorkloadView } from '../../core/images/workload.ts';
import { workloadId, type ImageChange, type WorkloadRef, type Workloads } from './workloads.ts';

/** `fn`'s result, or its throw as a rejection. */
function settle<T>(fn: () => T): Promise<T> {
  try {
    return Promise.resolve(fn());
  } catch (e) {
    return Promise.reject(e instanceof Error ? e : new Error(String(e)));
  }
}

interface Entry {
  kind: WorkloadKind;
  namespace: string;
  name: string;
  labels: Record<string, string>;
  containers: { name: string; image: string; init?: boolean }[];
  /** Progress reads left before the rollout is done. */
  pending: number;
}

export class FakeWorkloads implements Workloads {
  private readonly entries = new Map<string, Entry>();
  /** Images whose pods never become ready: a rollout onto one stays progressing. */
  readonly unready = new Set<string>();
  /** Every successful setImages, in order. */
  readonly changes: { ref: WorkloadRef; changes: readonly ImageChange[] }[] = [];
  nodePlatforms: string[] = ['linux/amd64'];

  private readonly rolloutReads: number;

  /** `rolloutReads`: progress reads a rollout takes (0: done at once). */
  constructor(rolloutReads = 1) {
    this.rolloutReads = rolloutReads;
  }

  /** Add (or replace) a workload, rolled out. */
  put(w: Omit<WorkloadView, 'available'>): void {
    this.entries.set(workloadId(w), {
      kind: w.kind,
      namespace: w.namespace,
      name: w.name,
      labels: { ...w.labels },
      containers: w.containers.map((c) => ({ ...c })),
      pending: 0,
    });
  }

  /** Someone else sets a container's image (no test op). */
  edit(ref: WorkloadRef, container: string, image: string): void {
    const c = this.get(ref).containers.find((x) => x.name === container);
    if (c !== undefined) c.image = image;
  }

  delete(ref: WorkloadRef): void {
    this.entries.delete(workloadId(ref));
  }

  private get(ref: WorkloadRef): Entry {
    const e = this.entries.get(workloadId(ref));
    if (e === undefined) throw workloadNotFound(ref);
    return e;
  }

  private state(e: Entry): WorkloadProgress {
    if (e.containers.some((c) => this.unready.has(c.image)))
      return { state: 'progressing', message: 'pods not ready' };
    return e.pending > 0
      ? { state: 'progressing', message: 'rolling out' }
      : { state: 'available' };
  }

  list(): Promise<WorkloadView[]> {
    return Promise.resolve(
      [...this.entries.values()].map((e) => ({
        kind: e.kind,
        namespace: e.namespace,
        name: e.name,
        labels: { ...e.labels },
        containers: e.containers.map((c) => ({ ...c })),
        available: this.state(e).state === 'available',
      })),
    );
  }

  setImages(ref: WorkloadRef, changes: readonly ImageChange[]): Promise<void> {
    return settle(() => {
      const e = this.get(ref);
      const edited = changes.flatMap((ch) => {
        const now = e.containers.find((c) => c.name === ch.container)?.image;
        return now === ch.from ? [] : [{ container: ch.container, expected: ch.from, now }];
      });
      if (edited.length > 0) throw workloadEdited(ref, edited);
      for (const ch of changes) {
        const c = e.containers.find((x) => x.name === ch.container);
        if (c !== undefined) c.image = ch.to;
      }
      e.pending = this.rolloutReads;
      this.changes.push({ ref, changes });
    });
  }

  progress(ref: WorkloadRef): Promise<WorkloadProgress> {
    return settle(() => {
      const e = this.get(ref);
      const p = this.state(e);
      if (e.pending > 0) e.pending--;
      return p;
    });
  }

  platforms(): Promise<string[]> {
    return Promise.resolve([...new Set(this.nodePlatforms)].sort());
  }
}
