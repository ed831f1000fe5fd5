// SPDX-License-Identifier: Apache-2.0
/**
 * Bringing the declared molt.dev objects into the operator at the start of each of the leader's
 * passes (docs/adr/0011; what to do is `decide/declared.ts`): the pools the pass plans with, the
 * holds in the store, the rollout actions a spec asks for, pools whose deletion can go through,
 * and each object's verdict written back. When the cluster cannot be read, the pass goes on with
 * the pools it last had — a cluster that is away never stops or unleashes a rollout.
 */
import { errorLine, isMoltError } from '../../core/errors.ts';
import type { Pool } from '../../core/rollout/types.ts';
import type { Identity } from '../../platform/https/identity.ts';
import { planDeclared, type ActionStep, type InventoryChanges } from '../decide/declared.ts';
import type { KubernetesClusterSpec } from '../../protocol/kube-cluster.ts';
import { declaredImages, declaredKubernetes, kubeClusterStatus } from '../decide/declared-named.ts';
import type { ImagePolicy } from '../../core/images/types.ts';
import type { Selection } from '../../core/images/units.ts';
import type { GmWatch } from '../images/gm-check.ts';
import { withFollowingConditions } from '../images/following-status.ts';
import { withGmConditions } from '../images/gm-status.ts';
import { currentDesired } from '../kubernetes/desired.ts';
import type { DeclaredSource, DeclaredState, DeclaredVerdict } from '../ports/declared.ts';
import type { TransitionSink } from '../transitions/record.ts';
import { applyDeclaredHold } from '../actions/machines.ts';
import { rollbackOn } from '../actions/rollback.ts';
import { actOn } from '../actions/rollout-action.ts';

export interface DeclaredDeps extends TransitionSink {
  readonly source: DeclaredSource;
  /** The fleet file's pools. */
  readonly filePools: readonly Pool[];
  /** The ids of the fleet file's machines. */
  readonly fileMachines: ReadonlySet<string>;
  /** Where the pools every pass (and the API) plan with are kept. */
  readonly setPools: (pools: readonly Pool[]) => void;
  readonly log: (line: string) => void;
  /** The fleet file's `clusters[].kubernetes` by cluster name (docs/adr/0012). @default none */
  readonly fileKubernetes?: ReadonlyMap<string, KubernetesClusterSpec>;
  /** Where the clusters' Kubernetes specs every pass plans with are kept. */
  readonly setKubernetes?: (specs: ReadonlyMap<string, KubernetesClusterSpec>) => void;
  /** The fleet file's image policies (docs/adr/0013). @default none */
  readonly fileImages?: readonly ImagePolicy[];
  /** Where the image policies every pass follows are kept. */
  readonly setImages?: (policies: readonly ImagePolicy[]) => void;
  /** The GM checks' last findings: each policy object's `GMImageMissing` condition. @default none */
  readonly gm?: Pick<GmWatch, 'findings'> | undefined;
  /** The image driver's last selection: each policy object's `Following` condition. @default none */
  readonly selection?: (() => Selection | undefined) | undefined;
}

export interface DeclaredRunner {
  /** Read the objects and apply them; never throws (failures are logged once each). */
  refresh(): Promise<void>;
  /** Call `listener` whenever a declared object changes (when the source can tell). */
  onChange(listener: () => void): void;
  /** Stop reading the objects. */
  close(): Promise<void>;
}

export function createDeclaredRunner(d: DeclaredDeps): DeclaredRunner {
  let lastAccepted = new Map<string, Pool>();
  let lastKubernetes = new Map<string, KubernetesClusterSpec>();
  let lastImages = new Map<string, ImagePolicy>();
  let lastError = '';
  const warned = new Set<string>();

  const once = (key: string, line: string): void => {
    if (warned.has(key)) return;
    warned.add(key);
    d.log(line);
  };

  const runAction = async (s: ActionStep): Promise<void> => {
    const who: Identity = { name: s.by, role: 'operator' };
    try {
      if (s.action === 'rollback') await rollbackOn(d, { id: s.rollout, who, reason: s.reason });
      else
        await actOn(d, {
          id: s.rollout,
          action: s.action,
          who,
          force: false,
          reason: s.reason,
        });
    } catch (e) {
      if (!isMoltError(e)) throw e;
      const message = `${s.reason}: ${s.action} refused: ${e.message}`;
      once(`${s.rollout}/${s.action}/${e.message}`, `declared: ${message}`);
      await d.source.warn(s.rollout, 'SpecRefused', message);
    }
  };

  const syncNodeMachines = async (c: InventoryChanges): Promise<void> => {
    for (const m of c.put) {
      await d.store.putMachine(m);
      d.log(`declared: machine ${m.id} from its Node (pool ${m.pool}, agent ${m.endpoint})`);
    }
    for (const id of c.remove) {
      await d.store.removeMachine(id);
      d.log(`declared: machine ${id} removed: its Node is gone or no longer labelled`);
    }
    for (const s of c.skipped)
      once(
        `node/${s.node}/${s.skipped}`,
        `declared: Node ${s.node} is not a machine: ${s.skipped}`,
      );
  };

  const applyHolds = async (holds: ReturnType<typeof planDeclared>['holds']): Promise<void> => {
    for (const h of holds) await applyDeclaredHold(d, h);
  };

  /** The clusters' Kubernetes in force, and their objects' verdicts with the plan in the status. */
  const applyKubernetes = async (declared: DeclaredState): Promise<DeclaredVerdict[]> => {
    const kube = declaredKubernetes({
      objects: declared.clusters ?? [],
      file: d.fileKubernetes ?? new Map(),
      lastAccepted: lastKubernetes,
    });
    lastKubernetes = new Map(kube.accepted);
    d.setKubernetes?.(kube.specs);
    const read = { store: d.store, declared: () => ({ specs: kube.specs, read: true }) };
    return Promise.all(
      kube.verdicts.map(async (v) => ({
        ...v,
        status: kubeClusterStatus({
          desired: await currentDesired(read, v.name),
          plan: (await d.store.kubeUpgrades(v.name)).at(-1),
        }),
      })),
    );
  };

  /** The image policies in force (docs/adr/0013), and their objects' verdicts. */
  const applyImages = (declared: DeclaredState): readonly DeclaredVerdict[] => {
    const images = declaredImages({
      objects: declared.images ?? [],
      file: d.fileImages ?? [],
      lastAccepted: lastImages,
    });
    lastImages = new Map(images.accepted);
    d.setImages?.([...images.specs.values()]);
    const following =
      d.selection === undefined
        ? images.verdicts
        : withFollowingConditions(images.verdicts, images.accepted, d.selection());
    return withGmConditions(following, images.accepted, d.gm?.findings());
  };

  const apply = async (): Promise<void> => {
    const declared = await d.source.read();
    const stored = await d.store.read();
    const plan = planDeclared({
      declared,
      filePools: d.filePools,
      fileMachines: d.fileMachines,
      stored,
      lastAccepted,
      objectName: (id) => d.source.objectName(id),
      now: d.now(),
    });
    d.setPools(plan.pools);
    lastAccepted = new Map(plan.accepted);
    await syncNodeMachines(plan.inventory);
    await applyHolds(plan.holds);
    for (const s of plan.actions) await runAction(s);
    for (const pool of plan.release) {
      await d.source.release(pool);
      d.log(`declared: pool ${pool} deleted; nothing of it was in flight any more`);
    }
    const clusters = await applyKubernetes(declared);
    await d.source.report([...plan.verdicts, ...clusters, ...applyImages(declared)]);
  };

  return {
    onChange: (listener) => d.source.onChange?.(listener),
    close: async () => {
      await d.source.close?.();
    },
    async refresh() {
      try {
        await apply();
        if (lastError !== '') d.log('declared molt.dev objects: read again');
        lastError = '';
      } catch (e) {
        const line = errorLine(e);
        if (line !== lastError)
          d.log(
            `declared molt.dev objects: ${line} (keeping the pools last read; retrying next pass)`,
          );
        lastError = line;
      }
    },
  };
}
