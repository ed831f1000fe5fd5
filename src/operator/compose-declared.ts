// SPDX-License-Identifier: Apache-2.0
/**
 * Composition of declared desired state (docs/adr/0011): the pools every part of the operator
 * plans with become live — the fleet file's at start, then what each pass reads from the declared
 * molt.dev objects — and the runner that brings those objects in (which acts through the same
 * `actions/` the API calls). `main.ts` calls these; nothing else constructs them.
 */
import type { Pool } from '../core/rollout/types.ts';
import { liveImages } from './compose-images.ts';
import { liveKubernetes } from './compose-kubernetes.ts';
import type { LoadedConfig } from './config.ts';
import {
  createDeclaredRunner,
  type DeclaredDeps,
  type DeclaredRunner,
} from './loop/declared/index.ts';

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

/** The runner on the wall clock (`loop/declared/`). */
export function declaredRunner(o: Omit<DeclaredDeps, 'now'>): DeclaredRunner {
  return createDeclaredRunner({ ...o, now: () => Date.now() });
}
