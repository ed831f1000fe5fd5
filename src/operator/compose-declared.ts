// SPDX-License-Identifier: Apache-2.0
/**
 * Composition of declared desired state (docs/adr/0011): the pools every part of the operator
 * plans with become live — the fleet file's at start, then what each pass reads from the declared
 * molt.dev objects — and the runner that brings those objects in (which acts through the same
 * `actions/` the API calls). `main.ts` calls these; nothing else constructs them.
 */
import type { Pool } from '../core/rollout/types.ts';
import type { KubernetesClusterSpec } from '../protocol/kube-cluster.ts';
import type { ImagePolicy } from '../core/images/types.ts';
import type { Selection } from '../core/images/units.ts';
import type { GmWatch } from './images/gm-check.ts';
import { liveImages } from './compose-images.ts';
import { liveKubernetes } from './compose-kubernetes.ts';
import type { LoadedConfig } from './config.ts';
import { createDeclaredRunner, type DeclaredRunner } from './loop/declared.ts';
import type { DeclaredSource } from './ports/declared.ts';
import type { OperatorStore } from './ports/store.ts';

/**
 * The config with live pools: `fleet.pools` is read through a getter, so the loop's settings, the
 * API, the providers and the status mirror all see the pools the last pass set.
 */
export function withLivePools(c: LoadedConfig): {
  config: LoadedConfig;
  /** The fleet file's own pools. */
  filePools: readonly Pool[];
  /** The fleet file's machine ids. */
  fileMachines: ReadonlySet<string>;
  setPools: (pools: readonly Pool[]) => void;
  /** The clusters' Kubernetes specs, live (docs/adr/0012). */
  kubernetes: ReturnType<typeof liveKubernetes>;
  /** The image policies in force, live (docs/adr/0013). */
  images: ReturnType<typeof liveImages>;
} {
  let pools = c.fleet.pools;
  const fleet = {
    ...c.fleet,
    get pools() {
      return pools;
    },
  };
  return {
    config: { ...c, fleet },
    filePools: c.fleet.pools,
    fileMachines: new Set(c.fleet.machines.map((m) => m.id)),
    setPools: (next) => {
      pools = next;
    },
    kubernetes: liveKubernetes(c),
    images: liveImages(c),
  };
}

export function declaredRunner(o: {
  readonly source: DeclaredSource;
  readonly filePools: readonly Pool[];
  readonly fileMachines: ReadonlySet<string>;
  readonly setPools: (pools: readonly Pool[]) => void;
  readonly store: OperatorStore;
  readonly log: (line: string) => void;
  /** The fleet file's Kubernetes per cluster, and where the live specs go (docs/adr/0012). */
  readonly fileKubernetes?: ReadonlyMap<string, KubernetesClusterSpec>;
  readonly setKubernetes?: (specs: ReadonlyMap<string, KubernetesClusterSpec>) => void;
  /** The fleet file's image policies (docs/adr/0013): checked beside the objects, verdicts written. */
  readonly fileImages?: readonly ImagePolicy[];
  /** Where the image policies in force go (`liveImages`). */
  readonly setImages?: (policies: readonly ImagePolicy[]) => void;
  /** The GM checks (`compose-gm.ts`): each ImagePolicy object's `GMImageMissing` condition. */
  readonly gm?: Pick<GmWatch, 'findings'> | undefined;
  /** The image driver's last selection: each ImagePolicy object's `Following` condition. */
  readonly selection?: (() => Selection | undefined) | undefined;
}): DeclaredRunner {
  return createDeclaredRunner({ ...o, now: () => Date.now() });
}
