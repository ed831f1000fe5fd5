// SPDX-License-Identifier: Apache-2.0
/**
 * What every {@link Workloads} must do (STYLE §7; docs/adr/0013 §4), run against the fake and
 * against a real control plane with lab kubelets: list the three kinds with labels, containers
 * (init ones marked) and availability; change images so the workload rolls out and becomes
 * available; refuse, changing nothing, a change whose `from` is stale (MOLT_WORKLOAD_EDITED,
 * saying what the container runs now); say MOLT_WORKLOAD_NOT_FOUND for a missing workload; and
 * report the Nodes' platforms.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ErrorCode } from '../core/errors.ts';
import type { WorkloadKind } from '../core/images/types.ts';
import type { WorkloadRef, Workloads, WorkloadView } from '../operator/ports/workloads.ts';
import { eventually } from '../platform/process/managed-process.ts';
import { rejectsWithCode } from './registry-conformance.ts';

/** A cluster (or its stand-in) the suite creates workloads in. */
export interface WorkloadsRig {
  readonly workloads: Workloads;
  /**
   * Create `ref` (a Deployment with 2 replicas) with init container `init` and containers `app`
   * and `side`, all running `image`, labelled `labels`; resolve once it is available.
   */
  create(ref: WorkloadRef, image: string, labels: Record<string, string>): Promise<void>;
  /** Someone else sets container `container` of `ref` to `image`. */
  edit(ref: WorkloadRef, container: string, image: string): Promise<void>;
  /** Three distinct image references whose pods become ready in this rig. */
  readonly images: readonly [string, string, string];
  /** What `platforms()` must answer. */
  readonly platforms: readonly string[];
  /** How long a real rollout may take. */
  readonly rolloutTimeoutMs: number;
  stop(): Promise<void>;
}

export interface WorkloadsTarget {
  readonly name: string;
  start(): Promise<WorkloadsRig>;
}

const kinds: readonly WorkloadKind[] = ['Deployment', 'DaemonSet', 'StatefulSet'];

export function workloadsConformance(target: WorkloadsTarget): void {
  describe(`Workloads conformance: ${target.name}`, () => {
    let rig: WorkloadsRig;
    const ns = `conf-${String(process.pid)}`;
    const ref = (kind: WorkloadKind, name = kind.toLowerCase()): WorkloadRef => ({
      kind,
      namespace: ns,
      name,
    });
    const find = async (r: WorkloadRef): Promise<WorkloadView | undefined> =>
      (await rig.workloads.list()).find(
        (w) => w.kind === r.kind && w.namespace === r.namespace && w.name === r.name,
      );
    const imagesOf = async (r: WorkloadRef): Promise<Record<string, string>> =>
      Object.fromEntries(((await find(r))?.containers ?? []).map((c) => [c.name, c.image]));
    const available = (r: WorkloadRef): Promise<void> =>
      eventually(
        async () => {
          const p = await rig.workloads.progress(r);
          assert.equal(p.state, 'available', JSON.stringify(p));
        },
        { timeoutMs: rig.rolloutTimeoutMs, intervalMs: 250 },
      );

    before(async () => {
      rig = await target.start();
      const [a] = rig.images;
      await Promise.all(kinds.map((k) => rig.create(ref(k), a, { tier: k.toLowerCase() })));
    });
    after(async () => {
      await (rig as WorkloadsRig | undefined)?.stop();
    });

    it('lists every kind with its labels, containers (init ones marked) and availability', async () => {
      const [a] = rig.images;
      for (const k of kinds) {
        const w = await find(ref(k));
        assert.ok(w !== undefined, `${k} listed`);
        assert.deepEqual(w.labels, { tier: k.toLowerCase() });
        assert.deepEqual(
          [...w.containers].sort((x, y) => x.name.localeCompare(y.name)),
          [
            { name: 'app', image: a },
            { name: 'init', image: a, init: true },
            { name: 'side', image: a },
          ],
        );
        assert.equal(w.available, true, `${k} available`);
      }
    });

    it('changes images with one patch; the workload rolls out and becomes available', async () => {
      const [a, b] = rig.images;
      for (const k of kinds) {
        const r = ref(k);
        await rig.workloads.setImages(r, [
          { container: 'app', from: a, to: b },
          { container: 'init', from: a, to: b },
        ]);
        assert.deepEqual(await imagesOf(r), { app: b, init: b, side: a });
      }
      for (const k of kinds) await available(ref(k));
      for (const k of kinds) assert.equal((await find(ref(k)))?.available, true);
    });

    it('refuses a stale change with MOLT_WORKLOAD_EDITED, says what runs now, changes nothing', async () => {
      const [a, b, c] = rig.images;
      const r = ref('Deployment', 'edited');
      await rig.create(r, a, {});
      await rig.edit(r, 'app', c);
      await eventually(async () => {
        assert.equal((await imagesOf(r))['app'], c);
      });
      // `side` alone would apply: the patch is all or nothing.
      await rejectsWithCode(
        rig.workloads.setImages(r, [
          { container: 'side', from: a, to: b },
          { container: 'app', from: a, to: b },
        ]),
        ErrorCode.WorkloadEdited,
        'app',
        c,
      );
      assert.deepEqual(await imagesOf(r), { app: c, init: a, side: a });
      await rejectsWithCode(
        rig.workloads.setImages(r, [{ container: 'gone', from: a, to: b }]),
        ErrorCode.WorkloadEdited,
        'gone',
      );
    });

    it('says MOLT_WORKLOAD_NOT_FOUND for a workload that does not exist', async () => {
      const [a, b] = rig.images;
      for (const k of kinds) {
        const r = ref(k, 'missing');
        await rejectsWithCode(rig.workloads.progress(r), ErrorCode.WorkloadNotFound, r.name);
        await rejectsWithCode(
          rig.workloads.setImages(r, [{ container: 'app', from: a, to: b }]),
          ErrorCode.WorkloadNotFound,
          `${k}/${ns}/missing`,
        );
      }
    });

    it("reports the Nodes' platforms", async () => {
      assert.deepEqual(await rig.workloads.platforms(), rig.platforms);
    });
  });
}
