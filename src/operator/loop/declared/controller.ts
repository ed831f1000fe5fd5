// SPDX-License-Identifier: Apache-2.0
/**
 * What the declared kinds' controllers share: the operator's dependencies, one pass's reading of
 * the objects and the store, and the shape of a controller — it applies what its kind asks
 * (through `decide/declared*.ts` for what, `actions/` for how) and answers its objects' verdicts,
 * which the runner (`index.ts`) writes back in one report.
 */
import type { ImagePolicy } from '../../../core/images/types.ts';
import type { Selection } from '../../../core/images/units.ts';
import type { Pool } from '../../../core/rollout/types.ts';
import type { KubernetesClusterSpec } from '../../../protocol/kube-cluster.ts';
import type { DeclaredInput } from '../../decide/declared.ts';
import type { GmWatch } from '../../images/gm-check.ts';
import type { DeclaredSource, DeclaredState, DeclaredVerdict } from '../../ports/declared.ts';
import type { StoredState } from '../../ports/store.ts';
import type { TransitionSink } from '../../transitions/record.ts';

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

/** One pass's reading: the declared objects and the store, read once for every controller. */
export interface DeclaredPass {
  readonly declared: DeclaredState;
  readonly stored: StoredState;
  readonly now: number;
}

/** One declared kind's controller: applies its objects, answers their verdicts. */
export interface DeclaredController {
  apply(pass: DeclaredPass): Promise<readonly DeclaredVerdict[]>;
}

/** Log `line` once per `key` for the runner's life: a refusal repeats every pass. */
export type Once = (key: string, line: string) => void;

/** The decisions' input for `pass` (`lastAccepted`: the pools' memory; others ignore it). */
export function inputOf(
  d: DeclaredDeps,
  pass: DeclaredPass,
  lastAccepted: ReadonlyMap<string, Pool> = new Map(),
): DeclaredInput {
  return {
    declared: pass.declared,
    filePools: d.filePools,
    fileMachines: d.fileMachines,
    stored: pass.stored,
    lastAccepted,
    objectName: (id) => d.source.objectName(id),
    now: pass.now,
  };
}
